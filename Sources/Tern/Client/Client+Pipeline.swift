import Foundation

/// The one engine under the closure, delegate and async APIs: each send makes a `Call`, which
/// owns the request's flow from building the `URLRequest` to the one delivery
/// (`Pipeline/Call.swift` reads it top to bottom).
extension Client {
    /// Starts `request` and calls `completion` at most once on `queue` (never before this
    /// returns): exactly once unless cancellation is silent for it or its lifetime drops the
    /// result. `completion` receives the public handle, if it is still alive. `cacheHit`, if
    /// given, receives a cache-then-network request's cached response first, on the same queue.
    /// Progress goes to `progressQueue` (default: `queue`).
    func perform<Value>(
        _ request: Request<Value>,
        queue: CallbackQueue,
        progressQueue: CallbackQueue? = nil,
        alwaysReport: Bool = false,
        cacheHit: (@Sendable (RequestHandle?, Response<Value>) -> Void)? = nil,
        completion: @escaping @Sendable (RequestHandle?, Result<Response<Value>, TernError>) -> Void
    ) -> RequestHandle {
        Call.start(
            request, on: self, queue: queue, progressQueue: progressQueue ?? queue, alwaysReport: alwaysReport,
            cacheHit: cacheHit, completion: completion)
    }

    /// The cache policy `request` runs under: its own, else its group's, else the client's.
    func cachePolicy<Value>(for request: Request<Value>) -> CachePolicy {
        request.cachePolicy ?? RequestSettings(self, group: request.group?.snapshot).cachePolicy
    }

    /// Where `request`'s callbacks run unless a call names a queue: its own, else the client's.
    func callbackQueue<Value>(for request: Request<Value>) -> CallbackQueue {
        request.callbackQueue ?? configuration.callbackQueue
    }
}
