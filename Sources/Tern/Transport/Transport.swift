import Foundation

/// The seam between a `Client` and the thing that moves bytes: `URLSessionTransport` by default,
/// a stub in tests, a libcurl transport on Linux later.
///
/// A transport speaks Foundation value types only. For each `start` it reports, in order and
/// never concurrently for the same request: zero or more `.response` events (each new response
/// — after an auth retry, say — replaces the previous one and its body), `.data` chunks and
/// `.sentBytes` progress, then exactly one `.completed`. It must never create work after
/// `invalidate()`; `start` then returns nil.
/// Thread safety: implementations must be safe to call from any thread.
public protocol Transport: Sendable {
    /// Starts sending `request` and reports its progress to `events`.
    /// - Parameters:
    ///   - request: The fully built request. Its `timeoutInterval` is the caller's deadline in
    ///     seconds; the client enforces that deadline itself, so the transport may use a longer one.
    ///   - events: Receives the request's events; retained until `.completed` has been sent.
    /// - Returns: A task that can cancel the request, or nil if the transport has been invalidated.
    func start(_ request: URLRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)?

    /// Starts sending `request`; with `streaming` the body should arrive chunk by chunk as it
    /// comes in (someone watches the progress), not once at the end. The default ignores
    /// `streaming` and calls `start(_:events:)`.
    func start(_ request: URLRequest, streaming: Bool, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)?

    /// Cancels everything in flight and refuses new work. Cancelled requests complete with
    /// `URLError(.cancelled)`.
    func invalidate()
}

extension Transport {
    /// Calls `start(_:events:)`: a transport that always delivers one way needs no more.
    public func start(_ request: URLRequest, streaming: Bool, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
        start(request, events: events)
    }
}

/// One request in flight inside a transport.
/// Thread safety: implementations must be safe to call from any thread.
public protocol TransportTask: Sendable {
    /// Stops the request; the transport then completes it with `URLError(.cancelled)`, unless it
    /// already completed. Calling it more than once has no further effect.
    func cancel()
}

/// What a transport reports about one request.
/// Thread safety: a value type, safe to share.
public enum TransportEvent: Sendable {
    /// Response headers arrived; discard any body received before.
    case response(HTTPURLResponse)
    /// A chunk of the (decompressed) body.
    case data(Data)
    /// Upload progress: bytes of the body sent so far, and the total if known.
    case sentBytes(Int64, expected: Int64?)
    /// The request ended: `nil` after a complete response, otherwise the failure.
    case completed(URLError?)
}
