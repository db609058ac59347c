import Foundation

/// The request-level state machine behind one `Call`: created → running ⇄ waiting → completing →
/// finished, every transition under one lock, so that exactly one terminal outcome is delivered
/// whatever races between attempts, a timeout and the cancellation APIs:
/// - cancellation and the deadline finish the request at once, from any phase, and deliver their
///   error through the call's `deliverEarly`;
/// - an attempt's outcome counts only while that attempt is the current one and the request is
///   running; a result finishes the request only when its callback actually runs (`claim()`), so
///   a cancellation that comes while it is processed or queued still wins, and no success or
///   failure ever arrives after a cancel call returns.
/// The per-exchange state (response head, body, timings) lives in each `Attempt`; here is only
/// the current attempt's number and the task that cancels it.
/// `RequestHandle` is its public face; the client's registry, the transport and the deadline
/// scheduler hold the core, never the handle, so a handle can be released while its request runs.
final class RequestCore: Sendable {
    /// How a terminal result gets the right to be delivered.
    enum Claim {
        /// Already claimed (cancel, timeout, an error inside `send`); deliver on the callback queue.
        case claimed
        /// Claim when the callback runs; drop it if something else finished the request first.
        case onDelivery
    }

    /// Where the request stands; `RequestHandle.Phase` is the coarse public view.
    enum Stage: Equatable {
        case created
        /// An attempt is in the transport (or the cache is being read).
        case running
        /// Between two attempts: a backoff delay, a credential being refreshed, or suspended.
        case waiting(WaitReason)
        /// The last attempt is done; its result is being processed or waits for its callback.
        case completing
        case finished
    }

    /// Why a request waits between attempts.
    enum WaitReason: Equatable {
        case beforeNextAttempt, credential, suspended
    }

    private struct State {
        var stage = Stage.created
        var cancellation: TernError.CancellationReason?
        var insideSend = true
        var call: (any CallTerminal)?
        var exchange: (any TransportTask)?
        var attempt = 0
        /// The request the current attempt sends (adapted), the same before its adapters, and the
        /// redirects followed to reach it.
        var current: URLRequest?
        var unadapted: URLRequest?
        var redirects: [Redirect] = []
        /// Seconds the exchanges answered by `redirects` took.
        var redirectTime: TimeInterval = 0
        var deadline: DispatchTime?
        var timeout: TimeInterval = 0
        /// Whether each attempt has a deadline of its own (`RetryPolicy.attemptTimeout`) instead
        /// of one for the whole request.
        var deadlinePerAttempt = false
        var onFinished: (@Sendable (RequestCore) -> Void)?
    }

    /// A number unique within the process, in creation order.
    let id: UInt64
    let method: HTTPMethod
    let url: URL?
    let tags: Set<String>
    let lifetime: Lifetime
    /// Whether a cancellation delivers `TernError.cancelled` (false: no callback at all).
    let reportsCancellation: Bool
    /// What repeat strategies compare; nil when the strategy is `.allow`.
    let identity: RequestIdentity?
    /// Delivers upload and download progress, when the request has a progress handler.
    let progress: ProgressReporter?
    private let state = Locked(State())
    /// The public handle, weakly: for `.handleReleased` and `.detached` it is the caller's to keep.
    private let weakHandle = WeakHandle()

    private static let counter = Locked<UInt64>(0)

    init(
        method: HTTPMethod, url: URL?, tags: Set<String> = [], lifetime: Lifetime = .untilFinished,
        reportsCancellation: Bool = true, identity: RequestIdentity? = nil, progress: ProgressReporter? = nil
    ) {
        self.id = Self.counter.withLock {
            $0 += 1; return $0
        }
        self.method = method
        self.url = url
        self.tags = tags
        self.lifetime = lifetime
        self.reportsCancellation = reportsCancellation
        self.identity = identity
        self.progress = progress
        progress?.attach(self)
    }

    /// Creates the public handle. The core holds it weakly; the call keeps it alive until
    /// delivery when the lifetime says the engine owns it (`.untilFinished`, `.owner`).
    func makeHandle() -> RequestHandle {
        let handle = RequestHandle(core: self)
        weakHandle.handle = handle
        return handle
    }

    /// Whether the engine keeps the handle alive until the result is delivered.
    var retainsHandle: Bool { lifetime.kind == .untilFinished || lifetime.kind == .owner }

    /// The public handle, if it is still alive.
    var handle: RequestHandle? { weakHandle.handle }

    /// Whether anyone still listens for the result: always, except for a `.detached` request
    /// whose handle has been released.
    var isListenedTo: Bool { lifetime.kind != .detached || weakHandle.handle != nil }

    var stage: Stage { state.withLock { $0.stage } }

    /// The coarse public phase.
    var phase: RequestHandle.Phase {
        switch stage {
        case .created: .created
        case .running, .waiting: .running
        case .completing: .completing
        case .finished: .finished
        }
    }

    /// The number of the current (or last) attempt; 0 before the first.
    var attempt: Int { state.withLock { $0.attempt } }

    var cancellationReason: TernError.CancellationReason? { state.withLock { $0.cancellation } }

    /// Runs once, right after the request reaches `.finished` (the registry removes it there).
    func setOnFinished(_ body: @escaping @Sendable (RequestCore) -> Void) {
        let alreadyFinished = state.withLock { state -> Bool in
            guard state.stage != .finished else { return true }
            state.onFinished = body
            return false
        }
        if alreadyFinished { body(self) }
    }

    /// Cancels the request for `reason`: it ends with `TernError.cancelled(reason)`, delivered
    /// unless cancellation is silent for it (or `silently` is set). Idempotent, from any phase.
    func cancel(_ reason: TernError.CancellationReason, silently: Bool = false) {
        guard let call = terminate(onlyIfRunning: false, cancellation: reason) else { return }
        call.cancelled(reason)
        if reportsCancellation && !silently { call.deliverEarly(.cancelled(reason)) }
    }

    /// Ends the request at once with `error`, delivered through its call (if it has begun one).
    func fail(_ error: TernError) {
        terminate(onlyIfRunning: false, cancellation: nil)?.deliverEarly(error)
    }

    // MARK: - The call's side

    /// Moves to `.running`, with the call that delivers early outcomes.
    func begin(_ call: any CallTerminal) {
        state.withLock {
            $0.call = call
            $0.stage = .running
        }
    }

    /// Whether `send` is still running for this request: a result produced before it returns
    /// (a synchronous transport, an early failure) must be delivered asynchronously.
    var isInsideSend: Bool { state.withLock { $0.insideSend } }

    /// Marks the end of `send`; callbacks may run inline from now on.
    func markSent() { state.withLock { $0.insideSend = false } }

    /// Numbers the attempt after `previous` (0 before the first), which sends `request` after
    /// `redirect` (its exchange took `took` s), if any; nil once not running or past `previous`.
    func nextAttempt(after previous: Int, sending request: URLRequest, following redirect: (Redirect, took: TimeInterval)? = nil) -> Int? {
        let next = state.withLock { state -> (Int, DispatchTime?)? in
            guard state.stage == .running, state.attempt == previous else { return nil }
            state.attempt += 1
            state.exchange = nil
            state.current = request
            state.unadapted = request
            if let redirect {
                state.redirects.append(redirect.0)
                state.redirectTime += redirect.took
            }
            guard state.deadlinePerAttempt else { return (state.attempt, nil) }
            state.deadline = DispatchTime.now() + state.timeout
            return (state.attempt, state.deadline)
        }
        guard let (number, rearmed) = next else { return nil }
        if let rearmed { DeadlineScheduler.shared.add(self, at: rearmed) }
        return number
    }

    /// Where the request stands among its attempts.
    struct Route: Sendable {
        /// The current attempt's number (0 before the first).
        let attempt: Int
        /// What the current attempt sends, after its adapters.
        let request: URLRequest?
        /// The same before its adapters: where a retry or a restart starts again.
        let unadapted: URLRequest?
        /// The redirects followed so far.
        let redirects: [Redirect]
        /// Seconds their exchanges took.
        let redirectTime: TimeInterval
    }

    /// The current attempt's number and request, and the redirects followed so far.
    var route: Route {
        state.withLock {
            Route(attempt: $0.attempt, request: $0.current, unadapted: $0.unadapted, redirects: $0.redirects, redirectTime: $0.redirectTime)
        }
    }

    /// Attempt `number`'s adapters made `request` of it; false (send nothing) when the request
    /// ended or moved on meanwhile.
    func adapted(_ request: URLRequest, attempt number: Int) -> Bool {
        state.withLock { state in
            guard state.stage == .running, state.attempt == number else { return false }
            state.current = request
            return true
        }
    }

    /// Ends the request with `error` if attempt `number` is still the current one and running
    /// (an adapter of that attempt failed).
    func fail(_ error: TernError, attempt number: Int) {
        let isCurrent = state.withLock { $0.stage == .running && $0.attempt == number }
        if isCurrent { fail(error) }
    }

    /// Keeps the exchange of attempt `number` so that a cancel can stop it; cancels it at once if
    /// the request ended or moved on meanwhile.
    func attach(_ exchange: any TransportTask, attempt number: Int) {
        let isCurrent = state.withLock { state -> Bool in
            guard state.stage == .running, state.attempt == number else { return false }
            state.exchange = exchange
            return true
        }
        if !isCurrent { exchange.cancel() }
    }

    /// Seconds until the request's deadline; nil when it has none, or when each attempt has its
    /// own (the waits between attempts then do not count).
    var secondsUntilDeadline: TimeInterval? {
        state.withLock { state in
            guard !state.deadlinePerAttempt, let deadline = state.deadline?.uptimeNanoseconds else { return nil }
            let now = DispatchTime.now().uptimeNanoseconds
            return deadline > now ? Double(deadline - now) / 1e9 : 0
        }
    }

    /// The last attempt (`number`, or the cache read when nil) is done: running → completing, and
    /// the deadline is put aside. False when the request ended or moved on meanwhile.
    func complete(attempt number: Int?) -> Bool {
        let deadline = state.withLock { state -> DispatchTime?? in
            guard state.stage == .running, number.map({ $0 == state.attempt }) ?? true else { return nil }
            state.stage = .completing
            state.exchange = nil
            return .some(state.deadline)
        }
        guard let deadline else { return false }
        if deadline != nil { DeadlineScheduler.shared.remove(id) }
        return true
    }

    /// A processed result asks for another attempt: completing → waiting, with the deadline
    /// armed again — except while suspended (held at a `RestartGate`, which may take as long as a
    /// user takes to log in). False when a cancel came first.
    func wait(_ reason: WaitReason) -> Bool {
        let deadline = state.withLock { state -> DispatchTime?? in
            guard state.stage == .completing else { return nil }
            state.stage = .waiting(reason)
            return .some(reason == .suspended || state.deadlinePerAttempt ? nil : state.deadline)
        }
        guard let deadline else { return false }
        if let deadline { DeadlineScheduler.shared.add(self, at: deadline) }
        return true
    }

    /// The wait is over: waiting → running; a suspended request gets a fresh deadline. False when
    /// a cancel or the deadline came first.
    func resume() -> Bool {
        let rearmed = state.withLock { state -> DispatchTime?? in
            guard case .waiting(let reason) = state.stage else { return nil }
            state.stage = .running
            guard reason == .suspended, state.deadline != nil, !state.deadlinePerAttempt else { return .some(nil) }
            state.deadline = DispatchTime.now() + state.timeout
            return .some(state.deadline)
        }
        guard let rearmed else { return false }
        if let rearmed { DeadlineScheduler.shared.add(self, at: rearmed) }
        return true
    }

    /// Arms the deadline; when it passes while the request is running or waiting, the request
    /// ends with `TernError.timedOut` and its exchange is cancelled. With `perAttempt`, each
    /// attempt gets `seconds` of its own instead (armed as it starts, not during waits), and a
    /// passed deadline fails only that attempt, which the retry policy may try again.
    func startDeadline(after seconds: TimeInterval, perAttempt: Bool = false) {
        guard seconds.isFinite, seconds > 0 else { return }
        arm(at: DispatchTime.now() + seconds) { state in
            state.timeout = seconds
            state.deadlinePerAttempt = perAttempt
        }
    }

    /// Called by the scheduler when the deadline has passed.
    func deadlinePassed() {
        typealias Expired = (seconds: TimeInterval, attempt: Int, call: (any CallTerminal)?, exchange: (any TransportTask)?)
        let expired = state.withLock { state -> Expired? in
            guard state.deadlinePerAttempt, state.stage == .running else { return nil }
            defer { state.exchange = nil }
            return (state.timeout, state.attempt, state.call, state.exchange)
        }
        guard let expired else {
            let (seconds, call) = state.withLock { ($0.timeout, $0.call) }
            // A streamed response that is still receiving counts its deadline from its last chunk.
            if let later = call?.extendedDeadline(), arm(at: later) { return }
            terminate(onlyIfRunning: true, cancellation: nil)?.deliverEarly(.timedOut(after: seconds))
            return
        }
        // Timeout first: libcurl's instant cancel would otherwise be reported first, as a cancel.
        expired.call?.attemptTimedOut(expired.attempt, after: expired.seconds)
        expired.exchange?.cancel()
    }

    /// Arms the deadline at `deadline` (with `change`) if the request is still running; whether it did.
    @discardableResult
    private func arm(at deadline: DispatchTime, _ change: (inout State) -> Void = { _ in }) -> Bool {
        let running = state.withLock { state -> Bool in
            guard state.stage == .running else { return false }
            state.deadline = deadline
            change(&state)
            return true
        }
        if running { DeadlineScheduler.shared.add(self, at: deadline) }
        return running
    }

    /// Pauses (or resumes) reading the running exchange's response: a streamed body's reader
    /// has fallen behind (or caught up).
    func setExchangePaused(_ paused: Bool) {
        guard let exchange = state.withLock({ $0.exchange }) else { return }
        if paused { exchange.suspend() } else { exchange.resume() }
    }

    /// Claims the right to deliver a processed result: true once, and only if nothing else
    /// (cancel, timeout) finished the request first.
    func claim() -> Bool {
        let finished = state.withLock { state -> ((@Sendable (RequestCore) -> Void)?, (any CallTerminal)?)? in
            guard state.stage == .completing else { return nil }
            state.stage = .finished
            defer { state.onFinished = nil; state.call = nil }
            return (state.onFinished, state.call)
        }
        guard let (onFinished, call) = finished else { return false }
        onFinished?(self)
        call?.ended()  // and released here, outside the lock: it may hold the last reference to the handle
        return true
    }

    /// Finishes the request early, cancelling its exchange and deadline.
    /// - Returns: The call to deliver the terminal error to, or nil if the request had already
    ///   finished (or, with `onlyIfRunning`, was neither running nor waiting).
    private func terminate(onlyIfRunning: Bool, cancellation: TernError.CancellationReason?) -> (any CallTerminal)? {
        typealias Taken = ((any CallTerminal)?, (any TransportTask)?, DispatchTime?, (@Sendable (RequestCore) -> Void)?)
        let taken = state.withLock { state -> Taken? in
            switch state.stage {
            case .finished: return nil
            case .created, .completing: if onlyIfRunning { return nil }
            case .running, .waiting: break
            }
            // A deadline is armed only while running or waiting.
            let armed: DispatchTime? = state.stage == .completing ? nil : state.deadline
            state.stage = .finished
            state.cancellation = cancellation
            defer { state.call = nil; state.exchange = nil; state.onFinished = nil }
            return (state.call, state.exchange, armed, state.onFinished)
        }
        guard let (call, exchange, deadline, onFinished) = taken else { return nil }
        progress?.stop()
        if deadline != nil { DeadlineScheduler.shared.remove(id) }
        exchange?.cancel()
        onFinished?(self)
        call?.ended()
        return call
    }
}

/// What a core delivers an early terminal error to: its `Call`.
protocol CallTerminal: AnyObject, Sendable {
    /// Delivers `error`, which ended the request before its attempts did (cancel, timeout, a
    /// failure inside `send`); the right to deliver is already claimed.
    func deliverEarly(_ error: TernError)
    /// The request was cancelled for `reason` (whether or not that is reported to its callback).
    func cancelled(_ reason: TernError.CancellationReason)
    /// Attempt `attempt` ran out of its own deadline (`RetryPolicy.attemptTimeout`): it fails
    /// with `TernError.timedOut`, and the decide stage may try again.
    func attemptTimedOut(_ attempt: Int, after seconds: TimeInterval)
    /// The request reached `.finished`, however it ended (its callback may still be on its
    /// way): release what it holds outside memory, like temporary files.
    func ended()
    /// When the deadline has passed: a later deadline to use instead (a streamed response counts
    /// from its last chunk), or nil to time out now.
    func extendedDeadline() -> DispatchTime?
}

/// The public handle, held weakly by its core.
// Sendable: `handle` is written once, in `makeHandle()`, before the core is shared with any
// other thread; weak loads are atomic.
private final class WeakHandle: @unchecked Sendable {
    weak var handle: RequestHandle?
}
