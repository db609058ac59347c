import Foundation

/// The one engine under the closure, delegate and async APIs. A request flows top-down:
/// build the `URLRequest` → start the transport and the deadline → collect the body →
/// validate → serialize → deliver on the callback queue, exactly once.
extension Client {
    /// Starts `request` and calls `completion` exactly once on `queue` (never before this returns).
    func perform<Value>(
        _ request: Request<Value>,
        queue: CallbackQueue,
        completion: @escaping @Sendable (RequestHandle, Result<Response<Value>, TernError>) -> Void
    ) -> RequestHandle {
        let start = Date()
        let clock = DispatchTime.now()
        let urlRequest: URLRequest
        do {
            urlRequest = try RequestBuilder.makeURLRequest(request, configuration: configuration)
        } catch {
            return finishedInsideSend(request.method, url: nil, error: error, queue: queue, completion: completion)
        }
        guard !isInvalidated else {
            return finishedInsideSend(request.method, url: urlRequest.url, error: .clientInvalidated, queue: queue, completion: completion)
        }

        let handle = RequestHandle(method: request.method, url: urlRequest.url)
        let validation = request.validation ?? configuration.validation
        let serializer = request.serializer
        let method = request.method
        // The sink holds the handle strongly; the handle drops the sink when it finishes.
        handle.begin { outcome, claim in
            // Validation and decoding run here, on the transport's thread, never on the main thread.
            let result = outcome.flatMap { raw in
                Result { () throws(TernError) -> Response<Value> in
                    try validation.validate(raw.response, body: raw.data, serializerTypes: serializer.acceptableContentTypes)
                    let value = try serializer.value(from: raw.data, response: raw.response, method: method)
                    let seconds = Double(DispatchTime.now().uptimeNanoseconds - clock.uptimeNanoseconds) / 1e9
                    return Response(request: urlRequest, httpResponse: raw.response, data: raw.data, value: value,
                                    timing: Timing(start: start, duration: seconds))
                }
            }
            // Never inside `send`: a result that is ready before it returns waits for it.
            let deliver = handle.isInsideSend ? queue.performLater : queue.perform
            switch claim {
            case .claimed: deliver { completion(handle, result) }
            case .onDelivery: deliver { if handle.claim() { completion(handle, result) } }
            }
        }

        let deadline = request.timeout ?? configuration.timeout
        let mapError: @Sendable (URLError) -> TernError = { [weak self] error in
            switch error.code {
            case .timedOut: .timedOut(after: deadline)
            case .cancelled: .cancelled(self?.isInvalidated == true ? .clientInvalidated : .explicit)
            default: .transport(error)
            }
        }
        handle.startDeadline(after: deadline)
        guard let task = transport.start(urlRequest, events: { event in handle.receive(event, mapError: mapError) }) else {
            // Invalidated between the check above and the transport.
            handle.terminate(onlyIfRunning: false, markCancelled: false)?(.failure(.clientInvalidated), .claimed)
            handle.markSent()
            return handle
        }
        handle.attach(task)
        handle.markSent()
        return handle
    }

    /// A handle for a request that ended inside `send`; its callback runs after `send` returns.
    private func finishedInsideSend<Value>(
        _ method: HTTPMethod,
        url: URL?,
        error: TernError,
        queue: CallbackQueue,
        completion: @escaping @Sendable (RequestHandle, Result<Response<Value>, TernError>) -> Void
    ) -> RequestHandle {
        let handle = RequestHandle(method: method, url: url)
        _ = handle.terminate(onlyIfRunning: false, markCancelled: false)
        queue.performLater { completion(handle, .failure(error)) }
        return handle
    }
}
