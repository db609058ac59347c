import Foundation

extension Client {
    /// Sends a request and calls `cached` with a fresh cached response first (cache-then-network
    /// requests), then `completion` once with the final result.
    ///
    /// Both run on `queue`, else the request's or the client's callback queue, never before `send`
    /// returns, and `cached` always before `completion`. `cached` is not called for other read
    /// modes, on a miss, or once the request was cancelled. Each response says where it came from
    /// (`Response.source`).
    /// - Parameters:
    ///   - convertible: What to send (a `Request` or an `Endpoint`); its `cachePolicy` (or the client's) decides the cache use.
    ///   - queue: Where the closures run.
    ///   - cached: Receives the cached response.
    ///   - completion: Receives the network (or revalidated, or stale) response, or the error.
    /// - Returns: A handle that can cancel the request.
    @discardableResult
    public func send<Value>(
        _ convertible: some RequestConvertible<Value>,
        queue: CallbackQueue? = nil,
        cached: @escaping @Sendable (Response<Value>) -> Void,
        completion: @escaping @Sendable (Result<Response<Value>, TernError>) -> Void
    ) -> RequestHandle {
        let request = convertible.makeRequest()
        return perform(
            request, queue: queue ?? callbackQueue(for: request),
            cacheHit: { _, response in cached(response) }, completion: { _, result in completion(result) })
    }

    /// The responses of a request as they come: for a cache-then-network request, the fresh
    /// cached response (if any), then the network's; for other requests, the one response. The
    /// stream ends after the last, or throws the request's `TernError`. Ending the iteration early
    /// cancels the request.
    public func responses<Value>(for convertible: some RequestConvertible<Value>) -> AsyncThrowingStream<Response<Value>, any Error> {
        let request = convertible.makeRequest()
        return AsyncThrowingStream { continuation in
            let handle = perform(
                request, queue: .immediate, progressQueue: callbackQueue(for: request),
                alwaysReport: true,
                cacheHit: { _, response in continuation.yield(response) },
                completion: { _, result in
                    switch result {
                    case .success(let response):
                        continuation.yield(response)
                        continuation.finish()
                    case .failure(let error):
                        continuation.finish(throwing: error)
                    }
                })
            continuation.onTermination = { termination in
                if case .cancelled = termination { handle.cancel() }
            }
        }
    }
}

extension RequestDelegate {
    /// A cache-then-network request found a fresh cached response; the final result follows.
    /// Does nothing unless the delegate implements it.
    public func request(_ request: RequestHandle, didHitCacheWith response: Response<any Sendable>) {}
}
