import Foundation

/// One request's lifecycle: its `CallStateMachine` under one lock, and the effects of its
/// actions (the deadline timer, cancelling the exchange, telling the call), carried out after
/// unlocking. Exactly one terminal outcome is delivered whatever races between attempts, a
/// timeout and the cancellation APIs:
/// - cancellation and the deadline finish the request at once, from any phase, and deliver their
///   error through the call's `deliverEarly`;
/// - a processed result finishes the request only when its callback actually runs (`claim()`),
///   so a cancellation that comes while it is processed or queued still wins, and no success or
///   failure ever arrives after a cancel call returns.
/// The per-exchange state (response head, body, timings) lives in each `Attempt`.
/// `RequestHandle` is its public face; the client's registry, the transport and the deadline
/// scheduler hold the core, never the handle, so a handle can be released while its request runs.
final class RequestCore: Sendable {
    typealias WaitReason = CallStateMachine.WaitReason
    typealias Route = CallStateMachine.Route
    private struct Guarded {
        var machine = CallStateMachine()
        /// Told when the request ends early; released when it finishes.
        var call: (any CallTerminal)?
        var onFinished: (@Sendable (RequestCore) -> Void)?
    }

    /// What a terminal action hands over: the call to tell, and who waits for the end.
    private typealias Ending = (call: (any CallTerminal)?, onFinished: (@Sendable (RequestCore) -> Void)?)

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
    private let guarded = Locked(Guarded())
    /// Uptime (ns) of the running attempt's last sign of life; 0 before any, `pausedByReader`
    /// while a streamed body's reader holds the exchange back. Apart from the machine's lock:
    /// every chunk touches it.
    private let lastActivity = Locked<UInt64>(0)
    private static let pausedByReader = UInt64.max
    /// The public handle, weakly: for `.handleReleased` and `.detached` it is the caller's to keep.
    let weakHandle = WeakHandle()

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

    // MARK: - Reading the machine

    private func read<T>(_ body: (CallStateMachine) -> T) -> T { guarded.withLock { body($0.machine) } }

    /// The coarse public phase.
    var phase: RequestHandle.Phase { read(\.phase) }

    /// Whether an attempt (or the cache read) is under way.
    var isRunning: Bool { read(\.isRunning) }

    /// The number of the current (or last) attempt; 0 before the first.
    var attempt: Int { read(\.route.attempt) }

    var cancellationReason: TernError.CancellationReason? { read(\.cancellation) }

    /// Why the request waits, while it waits between attempts.
    var waitReason: WaitReason? { read(\.waitReason) }

    /// The current attempt's number and request, and the redirects followed so far.
    var route: Route { read(\.route) }

    /// Whether `send` is still running for this request: a result produced before it returns
    /// (a synchronous transport, an early failure) must be delivered asynchronously.
    var isInsideSend: Bool { read(\.isInsideSend) }

    /// Seconds until the request's deadline; nil when it has none, or when each attempt has its
    /// own (the waits between attempts then do not count).
    var secondsUntilDeadline: TimeInterval? { read { $0.secondsUntilDeadline(now: .now()) } }

    // MARK: - Events

    /// Runs `event` on the machine under the lock; a terminal action takes the call and the
    /// end observer out with it.
    private func transition(_ event: (inout CallStateMachine) -> CallStateMachine.Action) -> (CallStateMachine.Action, Ending?) {
        guarded.withLock { guarded in
            let action = event(&guarded.machine)
            switch action {
            case .finishEarly, .deliver:
                defer { guarded.call = nil; guarded.onFinished = nil }
                return (action, (guarded.call, guarded.onFinished))
            default:
                return (action, nil)
            }
        }
    }

    /// Runs `event` and carries out a timer change; whether the event was current.
    @discardableResult
    private func step(_ event: (inout CallStateMachine) -> CallStateMachine.Action) -> Bool {
        switch transition(event).0 {
        case .proceed(let change), .startAttempt(_, let change):
            apply(change)
            return true
        case .ignore: return false
        case .cancelExchange(let exchange):
            exchange.cancel()
            return false
        case .timeOutAttempt, .hearOut, .finishEarly, .deliver:
            preconditionFailure("handled by its own event method")
        }
    }

    private func apply(_ change: CallStateMachine.TimerChange) {
        switch change {
        case .keep: break
        case .arm(let at): DeadlineScheduler.shared.add(self, at: at)
        case .disarm: DeadlineScheduler.shared.remove(id)
        }
    }

    /// Runs once, right after the request reaches `.finished` (the registry removes it there).
    func setOnFinished(_ body: @escaping @Sendable (RequestCore) -> Void) {
        let alreadyFinished = guarded.withLock { guarded -> Bool in
            guard guarded.machine.phase != .finished else { return true }
            guarded.onFinished = body
            return false
        }
        if alreadyFinished { body(self) }
    }

    /// Cancels the request for `reason`: it ends with `TernError.cancelled(reason)`, delivered
    /// unless cancellation is silent for it (or `silently` is set). Idempotent, from any phase.
    func cancel(_ reason: TernError.CancellationReason, silently: Bool = false) {
        guard let call = finishEarly({ $0.cancel(reason) }) else { return }
        call.cancelled(reason)
        if reportsCancellation && !silently { call.deliverEarly(.cancelled(reason)) }
    }

    /// Ends the request at once with `error`, delivered through its call (if it has begun one).
    func fail(_ error: TernError) {
        finishEarly { $0.fail() }?.deliverEarly(error)
    }

    /// Ends the request with `error` if attempt `number` is still the current one and running
    /// (an adapter of that attempt failed).
    func fail(_ error: TernError, attempt number: Int) {
        finishEarly { $0.fail(attempt: number) }?.deliverEarly(error)
    }

    /// Moves to `.running`, with the call that delivers early outcomes.
    func begin(_ call: any CallTerminal) {
        guarded.withLock {
            if case .proceed = $0.machine.begin() { $0.call = call }
        }
    }

    /// Marks the end of `send`; callbacks may run inline from now on.
    func markSent() { guarded.withLock { $0.machine.markSent() } }

    /// Numbers the attempt after `previous` (0 before the first), which sends `request` after
    /// `redirect` (its exchange took `took` s), if any; nil once not running or past `previous`.
    func nextAttempt(after previous: Int, sending request: URLRequest, following redirect: (Redirect, took: TimeInterval)? = nil) -> Int? {
        let (action, _) = transition { $0.nextAttempt(after: previous, sending: request, following: redirect, now: .now()) }
        guard case .startAttempt(let number, let change) = action else { return nil }
        apply(change)
        return number
    }

    /// Attempt `number`'s adapters made `request` of it; false (send nothing) when the request
    /// ended or moved on meanwhile.
    func adapted(_ request: URLRequest, attempt number: Int) -> Bool {
        step { $0.adapted(request, attempt: number) }
    }

    /// Keeps the exchange of attempt `number` so that a cancel can stop it; cancels it at once if
    /// the request ended or moved on meanwhile.
    func attach(_ exchange: any TransportTask, attempt number: Int) {
        step { $0.attach(exchange, attempt: number) }
    }

    /// The last attempt (`number`, or the cache read when nil) is done: running → completing, and
    /// the deadline is put aside. False when the request ended or moved on meanwhile.
    func complete(attempt number: Int?) -> Bool {
        step { $0.complete(attempt: number) }
    }

    /// A processed result asks for another attempt: completing → waiting, with the deadline
    /// armed again — except while suspended (held at a `RestartGate`, which may take as long as a
    /// user takes to log in). False when a cancel came first.
    func wait(_ reason: WaitReason) -> Bool {
        step { $0.wait(reason) }
    }

    /// The wait is over: waiting → running; a suspended request gets a fresh deadline. False when
    /// a cancel or the deadline came first.
    func resume() -> Bool {
        step { $0.resume(now: .now()) }
    }

    /// Starts the request's clocks (seconds; `.infinity` or nil for none): the idle `timeout`
    /// of each attempt, an attempt's own limit, and the deadline of the whole request. An idle or
    /// over-long attempt fails with `TernError.timedOut`, which the retry policy may try again;
    /// a passed deadline ends the request with `TernError.deadlineExceeded`.
    func startTimers(idle: TimeInterval, attemptLimit: TimeInterval?, deadline: TimeInterval) {
        step { $0.startTimers(idle: idle, attemptLimit: attemptLimit, total: deadline, now: .now()) }
    }

    /// A sign of life from the running attempt (a response head, a chunk, upload progress): the
    /// idle timeout counts from here.
    func touch() {
        let now = DispatchTime.now().uptimeNanoseconds
        lastActivity.withLock { if $0 != Self.pausedByReader { $0 = now } }
    }

    /// Called by the scheduler when the armed time has come. An idle attempt fails only after its
    /// exchange has delivered what it already received (`heardOut`): a transport whose events
    /// wait for a queue that a busy process holds up is not a silent server.
    func deadlinePassed(heardOut: Bool = false) {
        let now = DispatchTime.now()
        let last = lastActivity.withLock { $0 == Self.pausedByReader ? now.uptimeNanoseconds : $0 }
        let lastSignOfLife = last == 0 ? nil : DispatchTime(uptimeNanoseconds: last)
        var total: TimeInterval = 0
        let (action, ending) = transition { machine in
            defer { total = machine.timers.total ?? 0 }
            return machine.deadlinePassed(now: now, lastActivity: lastSignOfLife, asksToHearOut: !heardOut)
        }
        switch action {
        case .hearOut(let exchange):
            exchange.afterPendingEvents { [self] in deadlinePassed(heardOut: true) }
        case .timeOutAttempt(let attempt, let seconds, let exchange):
            // Timeout first: libcurl's instant cancel would otherwise be reported first, as a cancel.
            guarded.withLock { $0.call }?.attemptTimedOut(attempt, after: seconds)
            exchange?.cancel()
        case .finishEarly(let exchange, let change):
            finishedEarly(exchange: exchange, change, ending)?.deliverEarly(.deadlineExceeded(after: total))
        case .proceed(let change):
            apply(change)
        default:
            break
        }
    }

    /// Pauses (or resumes) reading the running exchange's response: a streamed body's reader
    /// has fallen behind (or caught up).
    func setExchangePaused(_ paused: Bool) {
        guard let exchange = read(\.exchange) else { return }
        // A reader that holds the response back is not an idle server.
        let now = DispatchTime.now().uptimeNanoseconds
        lastActivity.withLock { $0 = paused ? Self.pausedByReader : now }
        if paused { exchange.suspend() } else { exchange.resume() }
    }

    /// Claims the right to deliver a processed result: true once, and only if nothing else
    /// (cancel, timeout) finished the request first.
    func claim() -> Bool {
        let (action, ending) = transition { $0.claim() }
        guard case .deliver = action else { return false }
        ending?.onFinished?(self)
        ending?.call?.ended()  // and released here, outside the lock: it may hold the last reference to the handle
        return true
    }

    /// Runs an event that may finish the request early; when it does, cancels its exchange and
    /// deadline and returns the call to deliver the terminal error to (nil if it has none).
    private func finishEarly(_ event: (inout CallStateMachine) -> CallStateMachine.Action) -> (any CallTerminal)? {
        let (action, ending) = transition(event)
        guard case .finishEarly(let exchange, let change) = action else { return nil }
        return finishedEarly(exchange: exchange, change, ending)
    }

    /// Carries out a `.finishEarly`: progress, timer and exchange stop, the end is announced.
    private func finishedEarly(
        exchange: (any TransportTask)?, _ change: CallStateMachine.TimerChange, _ ending: Ending?
    ) -> (any CallTerminal)? {
        guard let ending else { return nil }
        progress?.stop()
        apply(change)
        exchange?.cancel()
        ending.onFinished?(self)
        ending.call?.ended()
        return ending.call
    }
}
