import Foundation

/// One request's whole life: the driver of its stages, in the order they run. Read this file top
/// to bottom to follow a request; each stage lives in `Stages/`.
///
/// Once per call:
/// 1. prepare — `RequestBuilder` builds the `URLRequest` with every header Tern adds (a request
///    that cannot be built fails here, after `send` returns);
/// 2. admit — the client's registry applies the repeat strategy; the deadline is armed;
/// 3. read the cache — `CacheReadStage`: a fresh entry can answer here.
///
/// Once per exchange, for attempt *n*:
/// 4. adapt — `AdaptStage` (async hooks; not after a redirect);
/// 5. exchange — `ExchangeStage.swift`: offline policy, the transfer's files
///    (`TransferStage.swift`), one exchange alone or shared; an `Attempt` collects its events;
/// 6. redirect — `RedirectStage`: a redirect becomes attempt *n + 1*.
///
/// Once per call, with the last attempt's outcome:
/// 7. rules — `ResponseHooksStage.swift`: proceed, fail, or stop until a gate restarts it;
/// 8. process — `ProcessStage.swift`: validate and decode, off the transport's thread when slow;
/// 9. retry — `RetryStage`: deliver, or wait and go back to 4;
/// 10. preprocess and store — the preprocessors, then the cache when the policy allows;
/// 11. deliver — `DeliveryStage.swift`: exactly once, on the callback queue.
///
/// Cancellation, the deadline and lifetimes can end the request at any stage: the
/// `CallStateMachine` of its `RequestLifecycle` decides who wins, and each step asks it before going on.
/// With no hooks and a small body the whole path stays on the thread that produced the response:
/// no `Task`, no hop.
/// Thread safety: safe to use from any thread; stages of one call run one after another.
// Sendable: every stored property it adds to its `RequestLifecycle` is a constant of a Sendable
// type; what changes lives in the lifecycle's lock.
final class Call<Value: Sendable>: RequestLifecycle, @unchecked Sendable {
    typealias Completion = @Sendable (RequestHandle?, Result<Response<Value>, TernError>) -> Void
    typealias CacheHit = @Sendable (RequestHandle?, Response<Value>) -> Void

    let client: Client
    /// The request as prepared, before any redirect.
    let urlRequest: URLRequest
    let queue: CallbackQueue
    /// Every option of the request, resolved once (request ▸ group ▸ client).
    let options: CallOptions
    /// Validation and decoding, with the request's serializer (ProcessStage.swift).
    let processing: ProcessStage<Value>
    let plan: CachePlan?
    /// The hooks of the request, its group and its client; nil when there are none.
    let hooks: HookChain?
    /// Who is told what happens to it: the client's monitors, tracer and metrics.
    let observers: CallObservers
    let cacheHit: CacheHit?
    let completion: Completion
    let started: (date: Date, uptime: UInt64)
    /// Where the response body goes: memory, a download's file, a streaming reader.
    let destination: ResponseDestination
    /// Where the body comes from when it is not in `urlRequest` (a file, a large multipart form, a
    /// produced body); nil otherwise.
    let requestBody: RequestBodySource?

    // MARK: 1–2. Prepare and admit — see PrepareStage.swift

    /// A call of `request`, prepared as `urlRequest`, whose repeats are compared by `identity`.
    init(
        _ request: Request<Value>, _ urlRequest: URLRequest, client: Client, options: CallOptions, hooks: HookChain?,
        identity: RequestIdentity?, progress: ProgressReporter?, queue: CallbackQueue, started: (date: Date, uptime: UInt64),
        destination: ResponseDestination, requestBody: RequestBodySource?, cacheHit: CacheHit?, completion: @escaping Completion
    ) {
        let id = RequestLifecycle.nextID()
        self.client = client
        self.urlRequest = urlRequest
        self.processing = ProcessStage(
            serializer: request.serializer.using(options.settings.decoder), validation: options.validation, method: request.method,
            destination: destination, request: urlRequest, started: started)
        self.options = options
        self.queue = queue
        // Bodies in files, either way, and streamed bodies are not cached.
        self.plan =
            destination.leavesMemory || requestBody != nil
            ? nil : client.cachePlan(for: request, urlRequest, policy: options.cachePolicy(of: request))
        self.destination = destination
        self.requestBody = requestBody
        self.hooks = hooks
        // A call that opens a socket's connection reports to the socket, which tells its own
        // beginning and end.
        self.observers = client.observers(
            requestID: id, method: request.method, url: urlRequest.url, tags: options.tags, upgrade: options.upgrade?.observer)
        self.cacheHit = cacheHit
        self.completion = completion
        self.started = started
        super.init(
            id: id, method: request.method, url: urlRequest.url, tags: options.tags, lifetime: request.lifetime,
            reportsCancellation: options.reportsCancellation, identity: identity, progress: progress)
    }

    // MARK: 3. Read the cache — see CacheReadStage.swift

    // MARK: 4. Adapt attempt n

    /// Starts the attempt after attempt `previous` (0: the first) with `urlRequest`, reached by
    /// `redirect` (whose exchange took `took` s) or not; adapters run first, except after a redirect.
    func startAttempt(_ urlRequest: URLRequest, after previous: Int, following redirect: (Redirect, took: TimeInterval)? = nil) {
        guard let route = nextAttempt(after: previous, sending: urlRequest, following: redirect) else { return }
        guard redirect == nil, let adapters = hooks?.adapters, !adapters.isEmpty else { return send(urlRequest, attempt: route) }
        AdaptStage(adapters: adapters).run(urlRequest, for: AttemptInfo(number: route.attempt, tags: tags)) { [self] outcome in
            switch outcome {
            case .success(let request): if adapted(request, attempt: route.attempt) { send(request, attempt: route) }
            case .failure(let error): fail(error, attempt: route.attempt)
            }
        }
    }

    // MARK: 5. Exchange — see ExchangeStage.swift

    // MARK: 6. Redirect

    /// Attempt `attempt` completed: follow a redirect as the next attempt, or go on with its outcome.
    func attemptFinished(_ attempt: Attempt<Value>, _ outcome: Result<RawResponse, URLError>) {
        report(outcome, of: attempt)
        if case .success(let raw) = outcome,
            let step = RedirectStage(policy: options.redirectPolicy).step(
                after: raw, to: attempt.request, followed: attempt.redirectsFollowed)
        {
            switch step {
            case .follow(let next, let redirect):
                observers.record(.redirected(redirect))
                return startAttempt(next, after: attempt.number, following: (redirect, raw.metrics?.total ?? 0))
            case .refuse(let error):
                return finish(.failure(error), attempt: attempt.number)
            }
        }
        finish(outcome.mapError { attempt.bodyFailure.map(TernError.requestBodyFailed) ?? transportError($0) }, attempt: attempt.number)
    }

    /// The request's last outcome is in (from attempt `number`, or from the cache when nil):
    /// resolve it against the cache entry, then process it here or off this thread.
    func finish(_ outcome: Result<RawResponse, TernError>, attempt number: Int?) {
        guard let (route, deadline) = complete(attempt: number) else { return }
        let resolved = plan?.resolve(outcome) ?? outcome
        if processing.runsElsewhere(
            resolved, hasResponseHooks: hooks?.hasResponseHooks == true, mayBeSlowToStore: plan?.mayBeSlowToStore == true)
        {
            Self.processingQueue.async { self.processAndDecide(resolved, route: route, deadline: deadline) }
        } else {
            processAndDecide(resolved, route: route, deadline: deadline)
        }
    }

    // MARK: 7–10. Rules, process, retry, preprocess and store

    /// Decides what `outcome`, the end of `route`, becomes before the request's `deadline`.
    private func processAndDecide(_ outcome: Result<RawResponse, TernError>, route: Route, deadline: DispatchTime?) {
        let rules = ResponseHooksStage<Value>(hooks)
        let context = rules?.context(
            for: outcome, request: route.request ?? urlRequest, attempt: route.attempt, tags: tags, requestStarted: started.uptime)
        var result: Result<Response<Value>, TernError>
        if case .success(let raw) = outcome, raw.source == .network {
            invalidateCache(after: raw.head)
            if destination.startsOver(afterStatus: raw.head.statusCode) {
                return retry(after: 0, from: route, error: nil)  // a stale partial file: from byte 0
            }
        }
        switch rules?.verdict(on: outcome, context: context) ?? .proceed {
        case .restart(let gate):
            return hold(at: gate, after: route)
        case .fail(let error):
            result = .failure(error)  // a rule's failure is final: never retried
        case .succeed:
            result = processing.process(outcome, route: route, validating: false)
        case .proceed:
            result = processing.process(outcome, route: route)
            // Only a failure can be retried: a success goes on.
            if let error = result.failure,
                case .retry(let delay) = RetryStage(policy: options.retryPolicy).decide(
                    error, attempt: route.attempt, method: method, url: (route.request ?? urlRequest).url,
                    chunksDelivered: destination.hasDelivered, bodyReplayable: requestBody?.isReplayable ?? true,
                    secondsLeft: CallStateMachine.Timers.seconds(until: deadline, from: .now()))
            {
                return retry(after: delay, from: route, error: error)
            }
        }
        result = rules?.preprocess(result, context: context) ?? result
        if case .success(let response) = result { store(response) }
        deliver(RetryStage.counted(result, route: route), context: context)
    }

    /// Stores the response as the request's cache policy says.
    private func store(_ response: Response<Value>) {
        if plan?.storeIfAllowed(response) == true { observers.record(.cacheStored) }
    }

    /// Invalidates what an unsafe request changed, by the exchange's answer alone (RFC 9111
    /// §4.4): whatever the app's validation, rules or decoding make of it afterwards.
    private func invalidateCache(after head: ResponseHead) {
        let stale = CacheInvalidation.urls(
            method: method, target: urlRequest.url, response: head, storesResponse: plan?.policy.write.isEmpty == false)
        if !stale.isEmpty { client.responseCache.invalidate(stale) }
    }

    // MARK: 9. Waits between attempts — see WaitStage.swift

    // MARK: 11. Deliver — see DeliveryStage.swift

    // MARK: An early end, carried out for the lifecycle

    /// Delivers an error that ended the request early (cancel, timeout). A cancel comes from a
    /// caller's own call (`cancel`, `cancel(tag:)`, a newer request, an owner's `deinit`): its
    /// callback runs after that call returns, never inside it, whatever the queue.
    override func deliverEarly(_ error: TernError, handle: RequestHandle?) {
        hand(.failure(error), claim: .claimed, handle: handle, later: error.isCancelled)
    }

    override func cancelled(_ reason: TernError.CancellationReason) {
        observers.requestEnded(.cancelled(reason), seconds: secondsSinceSend)
        observers.record(.cancelled(reason))
    }

    /// Attempt `number` ran out of its own deadline: its outcome is a timeout, decided like any.
    override func attemptTimedOut(_ number: Int, after seconds: TimeInterval) {
        finish(.failure(.timedOut(after: seconds)), attempt: number)
    }

    /// A download that did not succeed leaves no file (unless resumable), and a multipart form's
    /// temporary file goes.
    override func ended() {
        destination.requestEnded()
        requestBody?.ended()
        // A cancellation reported silently tells no `.finished`: it ends here.
        if observers.wantEvents, let reason = read(\.cancellation) {
            observers.endedSilently(outcome(of: .failure(.cancelled(reason))))
        }
    }

    /// Where slow processing and retry delays run: never a transport's callback thread.
    static var processingQueue: DispatchQueue { DispatchQueue.global(qos: .userInitiated) }
}
