import Foundation

/// One request started by a `Client`: what it is, where it stands, and the way to cancel it.
///
/// Every `send` returns one. Cancelling is idempotent and race-free: before the transport starts,
/// while it runs, or after completion (a no-op). Unless the request had already finished it ends
/// with `TernError.cancelled(.explicit)` — delivered on its callback queue, or not at all when
/// cancellation is silent for it — and no success or failure follows once `cancel()` returns.
///
/// With `Lifetime.handleReleased`, releasing the last reference to the handle cancels the
/// request (silently); with `.detached`, the request runs on but its result is only delivered
/// while the handle is alive.
/// Thread safety: safe to use from any thread.
public final class RequestHandle: Sendable, CustomStringConvertible {
    /// Where a request stands.
    public enum Phase: Sendable, Equatable {
        /// Built, not yet handed to the transport.
        case created
        /// In the transport (or waiting for a shared call, the cache, or the next attempt).
        case running
        /// The transport is done; the result is being decoded or waiting for its callback.
        case completing
        /// Its one terminal callback has been delivered or claimed.
        case finished
    }

    let lifecycle: RequestLifecycle

    init(lifecycle: RequestLifecycle) {
        self.lifecycle = lifecycle
    }

    deinit {
        if lifecycle.lifetime.kind == .handleReleased { lifecycle.cancel(.handleReleased, silently: true) }
    }

    /// A number unique within the process, in creation order.
    public var id: UInt64 { lifecycle.id }
    /// The request's method.
    public var method: HTTPMethod { lifecycle.method }
    /// The request's full URL, or nil when it could not be built.
    public var url: URL? { lifecycle.url }
    /// The request's tags.
    public var tags: Set<String> { lifecycle.tags }
    /// Where the request stands now.
    public var phase: Phase { lifecycle.read(\.phase) }
    /// Whether the request ended because it was cancelled, by any cancellation API.
    public var isCancelled: Bool { cancellationReason != nil }
    /// Why the request was cancelled, if it was.
    public var cancellationReason: TernError.CancellationReason? { lifecycle.read(\.cancellation) }
    /// The number of the exchange with the transport now running (or last run): 1 for the first,
    /// more after a followed redirect or a retry; 0 before the first starts or when the cache answered.
    public var attempt: Int { lifecycle.read(\.route.attempt) }
    /// Whether its terminal callback has been delivered or claimed.
    public var isFinished: Bool { phase == .finished }

    /// `GET https://… #id (phase)`.
    public var description: String { "\(method) \(url == nil ? "(invalid URL)" : Redaction.shared.url(url)) #\(id) (\(phase))" }

    /// Cancels the request. Idempotent; a no-op once it has finished. Its `.cancelled` callback
    /// runs after this returns, never inside it, even when called on the callback's queue.
    public func cancel() {
        lifecycle.cancel(.explicit)
    }
}

/// The lifecycle's side of its handle.
extension RequestLifecycle {
    /// Creates the public handle, held weakly; `begin(retaining:)` keeps it alive until the end
    /// when the lifetime says the engine owns it (`.untilFinished`, `.owner`).
    func makeHandle() -> RequestHandle {
        let handle = RequestHandle(lifecycle: self)
        weakHandle.object = handle
        return handle
    }

    /// Whether the engine keeps the handle alive until the result is delivered.
    var retainsHandle: Bool { lifetime.kind == .untilFinished || lifetime.kind == .owner }

    /// The public handle, if it is still alive.
    var handle: RequestHandle? { weakHandle.object }

    /// Whether anyone still listens for the result: always, except for a `.detached` request
    /// whose handle has been released.
    var isListenedTo: Bool { lifetime.kind != .detached || weakHandle.object != nil }
}
