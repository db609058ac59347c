import Foundation

/// The one engine under the closure, delegate and async APIs. A request flows top-down:
/// build the `URLRequest` → admit it to the registry under its repeat strategy → start the
/// deadline and the transport (or join a shared call) → collect the body → validate →
/// serialize → deliver on the callback queue, exactly once.
extension Client {
    /// Starts `request` and calls `completion` at most once on `queue` (never before this
    /// returns): exactly once unless cancellation is silent for it or its lifetime drops the
    /// result. `completion` receives the public handle, if it is still alive.
    func perform<Value>(
        _ request: Request<Value>,
        queue: CallbackQueue,
        alwaysReport: Bool = false,
        completion: @escaping @Sendable (RequestHandle?, Result<Response<Value>, TernError>) -> Void
    ) -> RequestHandle {
        let start = Date()
        let clock = DispatchTime.now()
        let reports = alwaysReport || (request.reportsCancellation ?? configuration.reportsCancellation)
        let urlRequest: URLRequest
        do {
            urlRequest = try RequestBuilder.makeURLRequest(request, configuration: configuration)
        } catch {
            return finishedInsideSend(request, url: nil, error: error, queue: queue, completion: completion)
        }
        guard !isInvalidated else {
            return finishedInsideSend(request, url: urlRequest.url, error: .clientInvalidated, queue: queue, completion: completion)
        }

        let strategy = request.repeatStrategy ?? configuration.repeatStrategy
        let progress = request.progress.map { ProgressReporter(queue: queue, handler: $0) }
        let core = RequestCore(method: request.method, url: urlRequest.url, tags: request.tags, lifetime: request.lifetime,
                               reportsCancellation: reports, identity: Self.identity(of: request, urlRequest, strategy),
                               progress: progress)
        let handle = core.makeHandle()
        let validation = request.validation ?? configuration.validation
        let serializer = request.serializer
        let method = request.method
        // The sink holds the core strongly, and the handle too when the engine owns it; the core
        // drops the sink when it finishes.
        let retainedHandle = core.retainsHandle ? handle : nil
        core.begin { outcome, claim in
            let handle = retainedHandle ?? core.handle
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
            let deliver = core.isInsideSend ? queue.performLater : queue.perform
            switch claim {
            case .claimed:
                deliver { if core.isListenedTo { completion(handle, result) } }
            case .onDelivery:
                deliver {
                    if core.lifetime.ownerIsGone {
                        core.cancel(.ownerReleased)
                    } else if core.claim(), core.isListenedTo {
                        completion(handle, result)
                    }
                }
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
        switch admit(core, strategy: strategy) {
        case .duplicate:
            core.cancel(.duplicate)
        case .run(let superseded):
            superseded.forEach { $0.cancel(.superseded) }
            core.startDeadline(after: deadline)
            startAlone(core, urlRequest, mapError: mapError)
        case .share(let flight, let leads):
            core.startDeadline(after: deadline)
            if flight.join(core, mapError: mapError) {
                core.attach(FlightMembership(flight: flight, id: core.id))
                if leads {
                    for refused in flight.start(urlRequest, on: transport, streaming: progress != nil) {
                        refused.terminate(onlyIfRunning: false, cancellation: nil)?(.failure(.clientInvalidated), .claimed)
                    }
                }
            } else {
                // The shared call closed between lookup and join: this request goes alone.
                startAlone(core, urlRequest, mapError: mapError)
            }
        }
        if request.lifetime.kind == .owner { OwnerWatcher.shared.watch(core) }
        core.markSent()
        return handle
    }

    private static func identity<Value>(of request: Request<Value>, _ urlRequest: URLRequest, _ strategy: RepeatStrategy) -> RequestIdentity? {
        switch strategy {
        case .allow: nil
        case .share: RequestIdentity(urlRequest)
        case .cancelOlder, .ignoreNewer: request.repeatKey.map(RequestIdentity.init(key:)) ?? RequestIdentity(urlRequest)
        }
    }

    private func startAlone(_ core: RequestCore, _ urlRequest: URLRequest, mapError: @escaping @Sendable (URLError) -> TernError) {
        guard let task = transport.start(urlRequest, streaming: core.progress != nil,
                                         events: { event in core.receive(event, mapError: mapError) }) else {
            // Invalidated between the check in `perform` and the transport.
            core.terminate(onlyIfRunning: false, cancellation: nil)?(.failure(.clientInvalidated), .claimed)
            return
        }
        core.attach(task)
    }

    /// A handle for a request that ended inside `send`; its callback runs after `send` returns.
    private func finishedInsideSend<Value>(
        _ request: Request<Value>,
        url: URL?,
        error: TernError,
        queue: CallbackQueue,
        completion: @escaping @Sendable (RequestHandle?, Result<Response<Value>, TernError>) -> Void
    ) -> RequestHandle {
        let core = RequestCore(method: request.method, url: url, tags: request.tags, lifetime: request.lifetime)
        let handle = core.makeHandle()
        _ = core.terminate(onlyIfRunning: false, cancellation: nil)
        let retainedHandle = core.retainsHandle ? handle : nil
        queue.performLater { [weak handle] in
            let handle = retainedHandle ?? handle
            if core.lifetime.kind != .detached || handle != nil { completion(handle, .failure(error)) }
        }
        return handle
    }
}
