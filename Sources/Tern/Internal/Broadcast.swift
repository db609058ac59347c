import Foundation

/// Events to every listener, in the order they are sent: the network monitor's changes, an
/// outbox's events and pending counts. A listener is a closure (`listen`) or an `AsyncStream`
/// (`stream`); `finish()` ends every stream, and those made after it end at once.
/// Thread safety: safe to use from any thread (one lock); listeners run outside it, on the
/// sender's thread, so one sender at a time keeps the order.
final class Broadcast<Event: Sendable>: Sendable {
    private struct Listener {
        let receive: @Sendable (Event) -> Void
        let end: (@Sendable () -> Void)?
    }

    private struct State {
        var listeners: [UInt64: Listener] = [:]
        var nextToken: UInt64 = 0
        var isFinished = false
    }

    private let state = Locked(State())

    /// Whether anyone listens.
    var hasListeners: Bool { state.withLock { !$0.listeners.isEmpty } }

    /// Calls `receive` with each event from now on until the returned closure is called (or the
    /// broadcast finishes: then `end`); nil when it has finished already.
    @discardableResult
    func listen(_ receive: @escaping @Sendable (Event) -> Void, end: (@Sendable () -> Void)? = nil) -> (@Sendable () -> Void)? {
        let token = state.withLock { state -> UInt64? in
            guard !state.isFinished else { return nil }
            state.nextToken += 1
            state.listeners[state.nextToken] = Listener(receive: receive, end: end)
            return state.nextToken
        }
        guard let token else { return nil }
        return { [weak self] in self?.state.withLock { _ = $0.listeners.removeValue(forKey: token) } }
    }

    /// `first` (what a new listener must see before any change), then each event from now on,
    /// until the iteration stops or the broadcast finishes. `policy`: what a slow reader keeps.
    func stream(
        first: [Event] = [], bufferingPolicy policy: AsyncStream<Event>.Continuation.BufferingPolicy = .unbounded
    )
        -> AsyncStream<Event>
    {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: policy)
        for event in first { continuation.yield(event) }
        guard let stop = listen({ continuation.yield($0) }, end: { continuation.finish() }) else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { _ in stop() }
        return stream
    }

    /// Sends `event` to every listener.
    func send(_ event: Event) {
        for listener in state.withLock({ Array($0.listeners.values) }) { listener.receive(event) }
    }

    /// Ends every listener that has an end; later listeners end at once.
    func finish() {
        let ended = state.withLock { state -> [Listener] in
            state.isFinished = true
            defer { state.listeners = [:] }
            return Array(state.listeners.values)
        }
        for listener in ended { listener.end?() }
    }
}
