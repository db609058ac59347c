import Foundation

/// Cancels requests whose owner (`Lifetime.owner`) has been deallocated.
///
/// Swift has no portable hook on deallocation (associated objects are Objective-C only), so one
/// shared timer checks the weak owners every 0.1 s while any owned request is in flight, and stops
/// when none is. Delivery also checks the owner, so no result reaches a released owner even
/// between two checks.
/// Thread safety: safe to use from any thread.
final class OwnerWatcher: Sendable {
    static let shared = OwnerWatcher()
    static let interval = DispatchTimeInterval.milliseconds(100)

    private struct State {
        var lifecycles: [UInt64: RequestLifecycle] = [:]
        var isTicking = false
    }

    private let state = Locked(State())
    private let timer: SendableTimer

    private init() {
        let source = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "Tern.owners", qos: .utility))
        timer = SendableTimer(source: source)
        source.schedule(deadline: .distantFuture)
        source.setEventHandler { [weak self] in self?.tick() }
        source.resume()
    }

    /// Watches `lifecycle`'s owner until the request finishes.
    func watch(_ lifecycle: RequestLifecycle) {
        state.withLock { state in
            state.lifecycles[lifecycle.id] = lifecycle
            if !state.isTicking {
                state.isTicking = true
                timer.source.schedule(deadline: .now() + Self.interval, repeating: Self.interval, leeway: .milliseconds(20))
            }
        }
    }

    private func tick() {
        let released = state.withLock { state -> [RequestLifecycle] in
            var released: [RequestLifecycle] = []
            for (id, lifecycle) in state.lifecycles {
                if lifecycle.hasEnded {
                    state.lifecycles[id] = nil
                } else if lifecycle.lifetime.ownerIsGone {
                    state.lifecycles[id] = nil
                    released.append(lifecycle)
                }
            }
            if state.lifecycles.isEmpty {
                state.isTicking = false
                timer.source.schedule(deadline: .distantFuture)
            }
            return released
        }
        for lifecycle in released { lifecycle.cancel(.ownerReleased) }
    }
}
