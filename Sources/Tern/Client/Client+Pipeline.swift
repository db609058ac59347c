import Foundation

/// The one engine under the closure, delegate and async APIs. A request flows top-down:
/// build the `URLRequest` → admit it to the registry under its repeat strategy → start the
/// deadline and the transport (or join a shared call) → collect the body → validate →
/// serialize → deliver on the callback queue, exactly once.
extension Client {
    /// Starts `request` and calls `completion` at most once on `queue` (never before this
    /// returns): exactly once unless cancellation is silent for it or its lifetime drops the
    /// result. `completion` receives the public handle, if it is still alive. `cacheHit`, if
    /// given, receives a cache-then-network request's cached response first, on the same queue.
    func perform<Value>(
        _ request: Request<Value>,
        queue: CallbackQueue,
        alwaysReport: Bool = false,
        cacheHit: (@Sendable (RequestHandle?, Response<Value>) -> Void)? = nil,
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
        let plan = cachePlan(for: request, urlRequest)
        // The sink holds the core strongly, and the handle too when the engine owns it; the core
        // drops the sink when it finishes.
        let retainedHandle = core.retainsHandle ? handle : nil
        core.begin { outcome, claim in
            let handle = retainedHandle ?? core.handle
            // Validation, decoding and cache writes run here, on the transport's (or the cache
            // reader's) thread, never on the main thread.
            let result = (plan?.resolve(outcome) ?? outcome).flatMap { raw in
                Result { () throws(TernError) -> Response<Value> in
                    try validation.validate(raw.response, body: raw.data, serializerTypes: serializer.acceptableContentTypes)
                    let value = try serializer.value(from: raw.data, response: raw.response, method: method)
                    let seconds = Double(DispatchTime.now().uptimeNanoseconds - clock.uptimeNanoseconds) / 1e9
                    return Response(request: urlRequest, httpResponse: raw.response, data: raw.data, value: value,
                                    timing: Timing(start: start, duration: seconds), source: raw.source)
                }
            }
            if let plan, case .success(let response) = result { plan.storeIfAllowed(response) }
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
        let readsCache = plan?.reads == true
        switch admit(core, strategy: strategy, joiningFlight: !readsCache) {
        case .duplicate:
            core.cancel(.duplicate)
        case .run(let superseded):
            superseded.forEach { $0.cancel(.superseded) }
            core.startDeadline(after: deadline)
            if let plan, readsCache {
                let deliverHit = cacheHit.map { cacheHit in
                    Self.hitDelivery(core, urlRequest, serializer, method, start: start, clock: clock, queue: queue,
                                     retainedHandle: retainedHandle, to: cacheHit)
                }
                readCache(plan, for: core, urlRequest, deliverHit: deliverHit) { request in
                    // A shared request joins (or starts) its flight only now, after its cache read.
                    if strategy == .share, let identity = core.identity {
                        self.startShared(core, request, in: self.flight(for: identity), streaming: progress != nil, mapError: mapError)
                    } else {
                        self.startAlone(core, request, mapError: mapError)
                    }
                }
            } else {
                startAlone(core, urlRequest, mapError: mapError)
            }
        case .share(let flight, let leads):
            core.startDeadline(after: deadline)
            startShared(core, urlRequest, in: (flight, leads), streaming: progress != nil, mapError: mapError)
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

    /// Joins a shared call (starting it when `leads`), or goes alone if it closed meanwhile.
    private func startShared(_ core: RequestCore, _ urlRequest: URLRequest, in shared: (flight: Flight, leads: Bool),
                             streaming: Bool, mapError: @escaping @Sendable (URLError) -> TernError) {
        guard shared.flight.join(core, mapError: mapError) else {
            // The shared call closed between lookup and join: this request goes alone.
            return startAlone(core, urlRequest, mapError: mapError)
        }
        core.attach(FlightMembership(flight: shared.flight, id: core.id))
        guard shared.leads else { return }
        for refused in shared.flight.start(urlRequest, on: transport, streaming: streaming) {
            refused.terminate(onlyIfRunning: false, cancellation: nil)?(.failure(.clientInvalidated), .claimed)
        }
    }

    /// Delivers a cache-then-network hit, decoded with the request's serializer, on the callback
    /// queue: never inside `send`, never after the request finished or was cancelled.
    private static func hitDelivery<Value>(
        _ core: RequestCore, _ urlRequest: URLRequest, _ serializer: ResponseSerializer<Value>, _ method: HTTPMethod,
        start: Date, clock: DispatchTime, queue: CallbackQueue, retainedHandle: RequestHandle?,
        to cacheHit: @escaping @Sendable (RequestHandle?, Response<Value>) -> Void
    ) -> @Sendable (RawResponse) -> Void {
        { raw in
            guard let value = try? serializer.value(from: raw.data, response: raw.response, method: method) else { return }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - clock.uptimeNanoseconds) / 1e9
            let response = Response(request: urlRequest, httpResponse: raw.response, data: raw.data, value: value,
                                    timing: Timing(start: start, duration: seconds), source: raw.source)
            let deliver = core.isInsideSend ? queue.performLater : queue.perform
            deliver {
                if core.phase != .finished, core.isListenedTo { cacheHit(retainedHandle ?? core.handle, response) }
            }
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
