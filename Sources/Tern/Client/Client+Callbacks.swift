import Foundation

extension Client {
    /// Sends a request and calls `completion` once with its result.
    ///
    /// `completion` runs on `queue`, else the request's `callbackQueue`, else the client's
    /// (the main queue by default), and never before `send` returns.
    /// - Parameters:
    ///   - convertible: What to send (a `Request` or an `Endpoint`) and how to decode the answer.
    ///   - queue: Where `completion` runs; overrides the request's and the client's choice.
    ///   - completion: Receives the response or the error; called exactly once.
    /// - Returns: A handle that can cancel the request.
    @discardableResult
    public func send<Value>(
        _ convertible: some RequestConvertible<Value>,
        queue: CallbackQueue? = nil,
        completion: @escaping @Sendable (Result<Response<Value>, TernError>) -> Void
    ) -> RequestHandle {
        let request = convertible.makeRequest()
        return perform(request, queue: queue ?? callbackQueue(for: request)) { _, result in
            completion(result)
        }
    }

    /// Sends a request with separate success and failure closures, as AFNetworking's managers do.
    ///
    /// Exactly one of the two is called once, on `queue`, else the request's or the client's
    /// callback queue (the main queue by default).
    /// - Parameters:
    ///   - convertible: What to send (a `Request` or an `Endpoint`) and how to decode the answer.
    ///   - queue: Where the closures run.
    ///   - success: Receives the decoded value.
    ///   - failure: Receives the error (check `error.isCancelled` to ignore cancellations).
    /// - Returns: A handle that can cancel the request.
    @discardableResult
    public func send<Value>(
        _ convertible: some RequestConvertible<Value>,
        queue: CallbackQueue? = nil,
        success: @escaping @Sendable (Value) -> Void,
        failure: @escaping @Sendable (TernError) -> Void
    ) -> RequestHandle {
        let request = convertible.makeRequest()
        return send(request, queue: queue) { result in
            switch result {
            case .success(let response): success(response.value)
            case .failure(let error): failure(error)
            }
        }
    }

    /// Sends a request and reports its result to a delegate, held weakly.
    ///
    /// The delegate receives exactly one call for this request, on `queue`, else the request's or
    /// the client's callback queue (the main queue by default) — unless it has been deallocated,
    /// in which case the result is dropped. The request itself runs on either way.
    /// - Parameters:
    ///   - convertible: What to send (a `Request` or an `Endpoint`) and how to decode the answer.
    ///   - delegate: Receives the result; not retained.
    ///   - queue: Where the delegate is called.
    /// - Returns: A handle that can cancel the request; the delegate receives it too.
    @discardableResult
    public func send<Value>(
        _ convertible: some RequestConvertible<Value>,
        delegate: any RequestDelegate,
        queue: CallbackQueue? = nil
    ) -> RequestHandle {
        var request = convertible.makeRequest()
        let box = Weak<AnyObject>(delegate)
        if let transfers = delegate as? any TransferDelegate {
            // A transfer delegate follows progress too, with the request's handle.
            let follower = Weak<AnyObject>(transfers)
            request.progressObserver = { handle, progress in
                guard let handle, let delegate = follower.object as? any TransferDelegate else { return }
                delegate.request(handle, didUpdate: progress)
            }
        }
        let hit: @Sendable (RequestHandle?, Response<Value>) -> Void = { handle, response in
            guard let delegate = box.object as? any RequestDelegate, let handle else { return }
            delegate.request(handle, didHitCacheWith: response.erased())
        }
        return perform(request, queue: queue ?? callbackQueue(for: request), cacheHit: hit) { handle, result in
            guard let delegate = box.object as? any RequestDelegate, let handle else { return }
            switch result {
            case .success(let response): delegate.request(handle, didSucceedWith: response.erased())
            case .failure(let error): delegate.request(handle, didFailWith: error)
            }
        }
    }
}

/// Receives the results of the requests it was registered for, one call per request.
///
/// Calls arrive on the request's callback queue (the main queue by default). Tell requests apart
/// by their `RequestHandle` (`===`, `id`, `url`). Tern holds delegates weakly.
/// Thread safety: Tern calls a delegate only on the request's callback queue.
public protocol RequestDelegate: AnyObject {
    /// The request succeeded; `response.value` holds the decoded value (cast it to the request's type).
    func request(_ request: RequestHandle, didSucceedWith response: Response<any Sendable>)
    /// The request failed or was cancelled.
    func request(_ request: RequestHandle, didFailWith error: TernError)
    /// A cache-then-network request found a fresh cached response; its final result follows.
    /// Optional: the default does nothing.
    func request(_ request: RequestHandle, didHitCacheWith response: Response<any Sendable>)
}

extension Response {
    /// The same response with its value as `any Sendable`, for delegates.
    func erased() -> Response<any Sendable> {
        Response<any Sendable>(self, value: value)
    }
}
