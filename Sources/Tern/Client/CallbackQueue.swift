import Foundation

/// Where a closure or delegate callback runs.
/// Thread safety: a value type, safe to share.
public enum CallbackQueue: Sendable {
    /// The main queue; runs at once when the request ends on the main thread (AFNetworking's
    /// `dispatch_main_async_safe`), else asynchronously; never inside a call of Tern's (`send`,
    /// `cancel`). The default.
    case main
    /// A queue of your choice, always asynchronously.
    case queue(DispatchQueue)
    /// Whatever thread finished the request (a transport or timer thread): no hop at all. A
    /// request that ends inside a call of Tern's (`send`, `cancel`) is delivered on a concurrent
    /// queue of Tern's after that call returns. For callers that do their own hopping, and for
    /// benchmarks. Keep such a callback short: it runs on the transport's thread, and every other
    /// response of the client waits while it runs.
    case immediate

    /// Runs `work` on this queue: inline when already there (main) or when `.immediate`.
    func perform(_ work: @escaping @Sendable () -> Void) {
        switch self {
        case .main:
            if MainQueue.isCurrent { work() } else { DispatchQueue.main.async(execute: work) }
        case .queue(let queue):
            queue.async(execute: work)
        case .immediate:
            work()
        }
    }

    /// Runs `work` on this queue but never before the caller returns: for results produced inside
    /// `send` or `cancel`, so a callback never runs inside a call of Tern's.
    func performLater(_ work: @escaping @Sendable () -> Void) {
        switch self {
        case .main: DispatchQueue.main.async(execute: work)
        case .queue(let queue): queue.async(execute: work)
        case .immediate: Self.deferred.async(execute: work)
        }
    }

    /// Where `.immediate` work runs that must not run inline. A queue of Tern's own, not
    /// Dispatch's global one: on Linux that one has about a thread per core, which callers
    /// blocking in them (a semaphore, a synchronous wait) can hold for seconds.
    private static let deferred = DispatchQueue(label: "Tern.CallbackQueue.deferred", attributes: .concurrent)
}

/// Tells whether the caller runs on the main queue.
///
/// `Thread.isMainThread` is not enough: on Linux, once the main thread calls `dispatchMain()`
/// (as Swift's async `main` and test runners do), the main queue is drained by pool threads,
/// so main-queue work runs off the main thread. A queue-specific mark on the main queue is
/// right on every platform.
enum MainQueue {
    /// The key as a Sendable token (older Dispatch overlays do not mark the class Sendable).
    // Sendable: a DispatchSpecificKey is an immutable identity token; it is never mutated.
    private struct Key: @unchecked Sendable {
        let key = DispatchSpecificKey<UInt8>()
    }
    private static let marked: Key = {
        let marked = Key()
        DispatchQueue.main.setSpecific(key: marked.key, value: 1)
        return marked
    }()

    static var isCurrent: Bool {
        Thread.isMainThread || DispatchQueue.getSpecific(key: marked.key) == 1
    }
}
