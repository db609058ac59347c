import Foundation

/// One request's whole life, in the order it happens. Read this file top to bottom to follow a
/// request; stages with substance live beside it (`Call+Cache.swift`, `Call+Redirects.swift`,
/// `Call+Processing.swift`).
///
/// 1. prepare — build the `URLRequest` (a request that cannot be built fails here, after `send`
///    returns);
/// 2. admit — enter the client's registry under the repeat strategy, arm the deadline;
/// 3. read the cache, when the policy says so — a hit can end the request here;
/// 4. start attempt *n* — adapt it (hooks, asynchronously), then one exchange with the
///    transport, alone or shared with identical ones;
/// 5. attempt finished — a redirect becomes attempt *n + 1*;
/// 6. process — response rules (proceed, fail, or stop until a gate restarts it), then validate
///    and decode, off the transport's thread when that may be slow;
/// 7. decide — deliver, or wait and make another attempt; preprocess what is delivered;
/// 8. store — write the response to the cache when the policy allows;
/// 9. deliver — exactly once, on the callback queue, after any main-thread preprocessing.
///
/// Cancellation, the deadline and lifetimes can end the request at any stage; the `RequestCore`
/// state machine decides who wins, and every stage checks it before going on. With no hooks and a
/// small body the whole path stays on the thread that produced the response: no `Task`, no hop.
/// Thread safety: safe to use from any thread; stages of one call run one after another.
final class Call<Value: Sendable>: CallTerminal, AttemptOwner, Sendable {
    typealias Completion = @Sendable (RequestHandle?, Result<Response<Value>, TernError>) -> Void
    typealias CacheHit = @Sendable (RequestHandle?, Response<Value>) -> Void

    let client: Client
    /// The request as prepared, before any redirect.
    let urlRequest: URLRequest
    let core: RequestCore
    let queue: CallbackQueue
    /// Every option of the request, resolved once (request ▸ group ▸ client).
    let options: CallOptions
    let serializer: ResponseSerializer<Value>
    let plan: CachePlan?
    /// The hooks of the request, its group and its client; nil when there are none.
    let hooks: HookChain?
    /// Where the request's events go; nil when the client has no monitors.
    let monitor: MonitorChannel?
    let cacheHit: CacheHit?
    let completion: Completion
    let started: (date: Date, uptime: UInt64)
    /// The handle, kept alive until delivery when the lifetime says the engine owns it.
    let retainedHandle: RequestHandle?
    /// The files of a download request (`Request.download`); nil for other requests.
    let download: DownloadSession?
    /// The body, when it is streamed from disk (a file, a large multipart form); nil otherwise.
    let upload: UploadSource?
    /// Where a streamed response's chunks go (`Request.onChunk`); nil when the body is kept.
    let chunkSink: ChunkSink?

    // MARK: 1. Prepare

    /// Prepares `request`, then admits and starts it (stages 1–4); returns its handle.
    static func start(
        _ request: Request<Value>, on client: Client, queue: CallbackQueue, progressQueue: CallbackQueue,
        alwaysReport: Bool, cacheHit: CacheHit?, completion: @escaping Completion
    ) -> RequestHandle {
        let started = (date: Date(), uptime: DispatchTime.now().uptimeNanoseconds)
        let options = CallOptions(request, client: client, alwaysReportsCancellation: alwaysReport)
        let hooks = HookChain(request: request, settings: options.settings, client: client)
        let tags = options.tags
        let urlRequest: URLRequest
        let upload: UploadSource?
        let download = request.download.map(DownloadSession.init)
        do {
            if let problem = client.configurationError { throw problem }
            // Parameter and URL hooks run here: every later stage sees the rewritten request.
            (urlRequest, upload) = try RequestBuilder.prepare(request, options: options, hooks: hooks)
            guard !client.isInvalidated else { throw TernError.clientInvalidated }
            try download?.checkDestination()
        } catch {
            let core = RequestCore(method: request.method, url: nil, tags: tags, lifetime: request.lifetime)
            return failedInsideSend(core, error as? TernError ?? .clientInvalidated, queue: queue, completion: completion)
        }
        let strategy = options.repeatStrategy
        let progress = ProgressReporter.forRequest(request, queue: progressQueue)
        var identity =
            strategy == .allow
            ? nil
            : RequestIdentity(for: request, urlRequest, strategy: strategy, naming: client.configuration.identityHeaders)
        // A body on disk is not compared: an upload is never identical to another one.
        if upload != nil, request.repeatKey == nil { identity = identity?.unique() }
        let core = RequestCore(
            method: request.method, url: urlRequest.url, tags: tags, lifetime: request.lifetime,
            reportsCancellation: options.reportsCancellation, identity: identity, progress: progress)
        // Only the caller holds the handle, unless the lifetime says the engine owns it.
        let handle = core.makeHandle()
        let call = Call(
            request, urlRequest, core, client: client, options: options, hooks: hooks, queue: queue,
            started: started, retainedHandle: core.retainsHandle ? handle : nil,
            download: download, upload: upload, cacheHit: cacheHit, completion: completion)
        call.admit()
        return handle
    }

    private init(
        _ request: Request<Value>, _ urlRequest: URLRequest, _ core: RequestCore, client: Client,
        options: CallOptions, hooks: HookChain?, queue: CallbackQueue,
        started: (date: Date, uptime: UInt64), retainedHandle: RequestHandle?, download: DownloadSession?,
        upload: UploadSource?, cacheHit: CacheHit?, completion: @escaping Completion
    ) {
        self.client = client
        self.urlRequest = urlRequest
        self.serializer = request.serializer.using(options.settings.decoder)
        self.options = options
        self.core = core
        self.queue = queue
        self.chunkSink = request.chunkHandler.map {
            ChunkSink(handler: $0, queue: queue, validation: options.validation, core: core)
        }
        // Bodies in files, either way, and streamed bodies are not cached.
        self.plan =
            download != nil || upload != nil || request.chunkHandler != nil
            ? nil
            : client.cachePlan(for: request, urlRequest, policy: options.cachePolicy)
        self.download = download
        self.upload = upload
        self.hooks = hooks
        self.monitor =
            client.configuration.monitors.isEmpty
            ? nil
            : MonitorChannel(
                monitors: client.configuration.monitors, requestID: core.id, method: core.method, url: core.url, tags: core.tags)
        self.cacheHit = cacheHit
        self.completion = completion
        self.started = started
        self.retainedHandle = retainedHandle
    }

    var strategy: RepeatStrategy { options.repeatStrategy }
    var validation: ResponseValidation { options.validation }
    /// The deadline in seconds.
    var timeout: TimeInterval { options.timeout }
    var redirectPolicy: RedirectPolicy { options.redirectPolicy }
    var retryPolicy: RetryPolicy { options.retryPolicy }
    /// The headers that tell callers apart when attempts are shared.
    var identityHeaders: Set<String> { options.identityHeaders }
    /// The largest body the request takes, nil for none.
    var sizeLimit: Int? { options.sizeLimit }

    // MARK: 2. Admit

    private func admit() {
        core.begin(self)
        monitor?.send(.created(urlRequest))
        switch client.admit(core, strategy: strategy) {
        case .duplicate:
            core.cancel(.duplicate)
        case .run(let superseded):
            superseded.forEach { $0.cancel(.superseded) }
            if let perAttempt = retryPolicy.attemptTimeout {
                core.startDeadline(after: perAttempt, perAttempt: true)
            } else {
                core.startDeadline(after: timeout)
            }
            if let plan, plan.reads {
                readCache(plan)  // stage 3, then stage 4 on a miss or for cache-then-network
            } else {
                startAttempt(urlRequest, after: 0)
            }
        }
        if core.lifetime.kind == .owner { OwnerWatcher.shared.watch(core) }
        core.markSent()
    }

    // MARK: 3. Read the cache — see Call+Cache.swift

    // MARK: 4. Start attempt n

    /// Starts the attempt after attempt `previous` (0: the first) with `urlRequest`, reached by
    /// `redirect` (whose exchange took `took` s) or not; adapters run first, except after a redirect.
    func startAttempt(_ urlRequest: URLRequest, after previous: Int, following redirect: (Redirect, took: TimeInterval)? = nil) {
        guard let number = core.nextAttempt(after: previous, sending: urlRequest, following: redirect) else { return }
        if redirect == nil, let adapters = hooks?.adapters, !adapters.isEmpty {
            adapt(urlRequest, attempt: number, with: adapters)
        } else {
            send(urlRequest, attempt: number)
        }
    }

    /// Runs the adapters of attempt `number` in a `Task`, then sends what they made of it.
    private func adapt(_ urlRequest: URLRequest, attempt number: Int, with adapters: [any RequestAdapter]) {
        let info = AttemptInfo(number: number, tags: core.tags)
        Task { [self] in
            var adapted = urlRequest
            for adapter in adapters {
                do {
                    adapted = try await adapter.adapt(adapted, for: info)
                } catch {
                    return core.fail(.fromHook(adapter, error), attempt: number)
                }
            }
            if core.adapted(adapted, attempt: number) { send(adapted, attempt: number) }
        }
    }

    /// Sends attempt `number` through the transport, or joins an identical shared exchange.
    func send(_ urlRequest: URLRequest, attempt number: Int) {
        if let network = client.configuration.networkMonitor, client.configuration.offlineBehavior != .send,
            !network.status.isReachable
        {
            return sendOffline(urlRequest, attempt: number, network: network)
        }
        // Files take part here: where a download resumes from, a body on disk (see Call+Transfers.swift).
        guard let (urlRequest, exchange) = exchange(for: urlRequest, attempt: number) else { return }
        monitor?.send(.attemptStarted(attempt: number, request: urlRequest))
        let attempt = Attempt(number: number, sending: exchange, call: self)
        if strategy == .share, !movesFiles,
            let membership = client.join(
                attempt, sending: exchange, of: core.id, sharing: RequestIdentity(urlRequest, naming: identityHeaders))
        {
            core.attach(membership, attempt: number)
        } else if let task = client.startExchange(exchange, events: { attempt.receive($0) }) {
            core.attach(task, attempt: number)
        } else {
            // The transport was invalidated after `send` checked.
            core.fail(.clientInvalidated)
        }
    }

    /// Attempt `number` meets an offline device: fails at once, or waits for the network.
    private func sendOffline(_ urlRequest: URLRequest, attempt number: Int, network: NetworkMonitor) {
        switch client.configuration.offlineBehavior {
        case .failFast, .send:
            let attempt = Attempt(number: number, sending: TransportRequest(urlRequest), call: self)
            attemptFinished(attempt, .failure(URLError(.notConnectedToInternet)))
        case .waitForConnectivity:
            network.whenReachable { [self] in
                // Still this attempt's turn (not cancelled or timed out meanwhile)?
                if core.adapted(urlRequest, attempt: number) { send(urlRequest, attempt: number) }
            }
        }
    }

    // MARK: 5. Attempt finished

    /// Attempt `attempt` completed: follow a redirect as the next attempt, or go on with its outcome.
    func attemptFinished(_ attempt: Attempt, _ outcome: Result<RawResponse, URLError>) {
        // An attempt of a request that already ended (cancelled, timed out) is not news.
        if let monitor, core.phase != .finished {
            switch outcome {
            case .success(let raw): monitor.send(.responseReceived(attempt: attempt.number, response: raw.response, bytes: raw.data.count))
            case .failure(let error): monitor.send(.attemptFailed(attempt: attempt.number, error: transportError(error)))
            }
        }
        if case .success(let raw) = outcome, let step = redirectStep(after: raw) {
            switch step {
            case .follow(let next, let redirect):
                monitor?.send(.redirected(redirect))
                return startAttempt(next, after: attempt.number, following: (redirect, raw.metrics?.total ?? 0))
            case .refuse(let error):
                return finish(.failure(error), attempt: attempt.number)
            }
        }
        finish(outcome.mapError(transportError), attempt: attempt.number)
    }

    /// The request's last outcome is in (from attempt `number`, or from the cache when nil):
    /// resolve it against the cache entry, then process it here or off this thread.
    func finish(_ outcome: Result<RawResponse, TernError>, attempt number: Int?) {
        guard core.complete(attempt: number) else { return }
        let resolved = plan?.resolve(outcome) ?? outcome
        if processesElsewhere(resolved) {
            Self.processingQueue.async { self.processAndDecide(resolved) }
        } else {
            processAndDecide(resolved)
        }
    }

    // MARK: 6. Process — see Call+Processing.swift

    // MARK: 7. Decide

    private func processAndDecide(_ outcome: Result<RawResponse, TernError>) {
        let route = core.route
        let context = responseContext(for: outcome, route: route)
        var result: Result<Response<Value>, TernError>
        if let download, case .success(let raw) = outcome, download.startsOver(after: raw.response) {
            return retry(after: 0, from: route, error: nil)  // a stale partial file: from byte 0
        }
        switch verdict(on: outcome, context: context) {
        case .restart(let gate):
            return hold(at: gate, after: route)
        case .fail(let error):
            result = .failure(error)  // a rule's failure is final: never retried
        case .succeed:
            result = process(outcome, route: route, validating: false)
        case .proceed:
            result = process(outcome, route: route)
            if case .retry(let delay) = decide(result, attempt: route.attempt, url: (route.request ?? urlRequest).url) {
                return retry(after: delay, from: route, error: result.failure)
            }
        }
        result = preprocess(result, context: context)
        if case .success(let response) = result { store(response) }
        deliver(counted(result, route: route), claim: .onDelivery, context: context)
    }

    /// Waits `delay` seconds (cancellable, under the deadline), then makes the next attempt.
    private func retry(after delay: TimeInterval, from route: RequestCore.Route, error: TernError?) {
        guard core.wait(.beforeNextAttempt) else { return }
        if let monitor, let error { monitor.send(.retrying(attempt: route.attempt, delay: delay, error: error)) }
        Self.processingQueue.asyncAfter(deadline: .now() + delay) { [self] in startOver(after: route) }
    }

    /// Stops the request at `gate` until it restarts it (a new attempt) or drops it (that error).
    private func hold(at gate: RestartGate, after route: RequestCore.Route) {
        guard core.wait(gate.isOneShot ? .credential : .suspended) else { return }
        monitor?.send(.held(attempt: route.attempt))
        gate.hold(isOver: { [core] in core.phase == .finished }) { [self] outcome in
            switch outcome {
            case .success: startOver(after: route)
            case .failure(let error): core.fail(error)
            }
        }
    }

    /// The wait after `route`'s attempt is over: the next attempt sends that request again, as it
    /// was before its adapters — unless a cancel or the deadline ended the request meanwhile.
    private func startOver(after route: RequestCore.Route) {
        guard core.resume() else { return }
        startAttempt(route.unadapted ?? urlRequest, after: route.attempt)
    }

    // MARK: 8. Store

    private func store(_ response: Response<Value>) {
        if plan?.storeIfAllowed(response) == true { monitor?.send(.cacheStored) }
    }

    // MARK: 9. Deliver

    /// Delivers the terminal result on the callback queue: never inside `send`, never after a
    /// cancel won, never to a released owner.
    func deliver(_ result: Result<Response<Value>, TernError>, claim: RequestCore.Claim, context: ResponseContext? = nil) {
        if claim == .onDelivery, let main = hooks?.mainThreadPreprocessors, !main.isEmpty {
            // Stage 9's main-thread preprocessing, then the callback on its queue (inline on main).
            Task { @MainActor [self] in
                guard core.phase != .finished else { return }
                hand(Self.preprocessOnMain(result, context: context, with: main), claim: .onDelivery)
            }
        } else {
            hand(result, claim: claim)
        }
    }

    /// Runs the completion with `result` on the callback queue, if `claim` allows.
    private func hand(_ result: Result<Response<Value>, TernError>, claim: RequestCore.Claim) {
        core.progress?.flush()  // the last counts first, then the completion
        let run = core.isInsideSend ? queue.performLater : queue.perform
        let handle = retainedHandle
        switch claim {
        case .claimed:
            reportFinished(result)
            run { [self] in if core.isListenedTo { completion(handle ?? core.handle, result) } }
        case .onDelivery:
            run { [self] in
                if core.lifetime.ownerIsGone {
                    core.cancel(.ownerReleased)
                } else if core.claim() {
                    reportFinished(result)
                    if core.isListenedTo { completion(handle ?? core.handle, result) }
                }
            }
        }
    }

    /// Delivers an error that ended the request early (cancel, timeout).
    func deliverEarly(_ error: TernError) {
        deliver(.failure(error), claim: .claimed)
    }

    /// The request was cancelled (reported or not).
    func cancelled(_ reason: TernError.CancellationReason) {
        monitor?.send(.cancelled(reason))
    }

    /// Attempt `number` ran out of its own deadline: its outcome is a timeout, decided like any.
    func attemptTimedOut(_ number: Int, after seconds: TimeInterval) {
        finish(.failure(.timedOut(after: seconds)), attempt: number)
    }

    /// A request that failed inside `send`: its callback runs after `send` returns.
    private static func failedInsideSend(
        _ core: RequestCore, _ error: TernError, queue: CallbackQueue,
        completion: @escaping Completion
    ) -> RequestHandle {
        let handle = core.makeHandle()
        core.fail(error)  // no call has begun: this only marks it finished; delivered below
        let retainedHandle = core.retainsHandle ? handle : nil
        queue.performLater { [weak handle] in
            let handle = retainedHandle ?? handle
            if core.lifetime.kind != .detached || handle != nil { completion(handle, .failure(error)) }
        }
        return handle
    }

    /// The error a transport failure becomes.
    private func transportError(_ error: URLError) -> TernError {
        if let host = error.userInfo[TLSFailure.pinnedHostKey] as? String { return .pinningFailed(host: host) }
        return switch error.code {
        case .timedOut: .timedOut(after: timeout)
        case .cancelled: .cancelled(client.isInvalidated ? .clientInvalidated : .explicit)
        case .dataLengthExceedsMaximum: sizeLimit.map { .responseTooLarge(limit: $0) } ?? .transport(error)
        default: .transport(error)
        }
    }

    /// Where slow processing and retry delays run: never a transport's callback thread.
    static var processingQueue: DispatchQueue { DispatchQueue.global(qos: .userInitiated) }
}
