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
        #if DEBUG
        /// How many times the lock was taken: the cost of a request's walk, checked by a test.
        var takes = 0
        #endif
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
    /// When the running attempt last showed life, for its idle timeout.
    let signsOfLife = SignsOfLife()
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

    /// Runs `body` under the request's lock.
    private func locked<T>(_ body: (inout Guarded) -> T) -> T {
        guarded.withLock { guarded in
            #if DEBUG
            guarded.takes += 1
            #endif
            return body(&guarded)
        }
    }

    #if DEBUG
    /// How many times the request's lock has been taken (debug builds).
    var lockTakes: Int { guarded.withLock { $0.takes } }
    #endif

    /// Reads the machine under the lock (the handle's phase, attempt and cancellation reason).
    func read<T>(_ body: (CallStateMachine) -> T) -> T { locked { body($0.machine) } }

    /// Whether the request has ended (delivered, cancelled, failed, past its deadline): the one
    /// question every stage asks before doing work whose result only a live request wants.
    var hasEnded: Bool { read { $0.phase == .finished } }

    /// The current attempt's number and request, and the redirects followed so far.
    var route: Route { read(\.route) }

    /// Whether `send` is still running for this request: a result produced before it returns
    /// (a synchronous transport, an early failure) must be delivered asynchronously.
    var isInsideSend: Bool { read(\.isInsideSend) }

    // MARK: - The call's own steps

    /// Runs one of the call's own steps under the lock and carries out its timer change; the
    /// route to go on from, or nil when the request ended or moved on meanwhile.
    private func step(_ event: (inout CallStateMachine) -> CallStateMachine.Step) -> Route? {
        switch locked({ event(&$0.machine) }) {
        case .proceed(let route, let change):
            apply(change)
            return route
        case .stale:
            return nil
        }
    }

    private func apply(_ change: CallStateMachine.TimerChange) {
        switch change {
        case .keep: break
        case .arm(let at): DeadlineScheduler.shared.add(self, at: at)
        case .disarm: DeadlineScheduler.shared.remove(id)
        }
    }

    /// Moves to `.running`, with the call that delivers early outcomes.
    func begin(_ call: any CallTerminal) {
        locked {
            if case .proceed = $0.machine.begin() { $0.call = call }
        }
    }

    /// The request was admitted: starts its clocks (seconds; `.infinity` for none) — the idle
    /// `timeout` of each attempt, an attempt's own limit, the deadline of the whole request — and
    /// keeps `onFinished`, which runs once, right after the request reaches `.finished` (at once
    /// if a cancel got there first). An idle or over-long attempt fails with
    /// `TernError.timedOut`, which the retry policy may try again; a passed deadline ends the
    /// request with `TernError.deadlineExceeded`.
    func start(
        idle: TimeInterval, attemptLimit: TimeInterval?, deadline: TimeInterval, onFinished: @escaping @Sendable (RequestCore) -> Void
    ) {
        let now = DispatchTime.now()
        let (step, alreadyFinished) = locked { guarded in
            let step = guarded.machine.startTimers(idle: idle, attemptLimit: attemptLimit, total: deadline, now: now)
            let finished = guarded.machine.phase == .finished
            if !finished { guarded.onFinished = onFinished }
            return (step, finished)
        }
        if case .proceed(_, let change) = step { apply(change) }
        if alreadyFinished { onFinished(self) }
    }

    /// Marks the end of `send`; callbacks may run inline from now on.
    func markSent() { locked { $0.machine.markSent() } }

    /// Numbers the attempt after `previous` (0 before the first), which sends `request` after
    /// `redirect` (its exchange took `took` s), if any: its route, or nil once not running or
    /// past `previous`.
    func nextAttempt(after previous: Int, sending request: URLRequest, following redirect: (Redirect, took: TimeInterval)? = nil) -> Route?
    {
        step { $0.nextAttempt(after: previous, sending: request, following: redirect, now: .now()) }
    }

    /// Attempt `number`'s adapters made `request` of it; false (send nothing) when the request
    /// ended or moved on meanwhile.
    func adapted(_ request: URLRequest, attempt number: Int) -> Bool {
        step { $0.adapted(request, attempt: number) } != nil
    }

    /// Keeps the exchange of attempt `number` so that a cancel can stop it; cancels it at once if
    /// the request ended or moved on meanwhile.
    func attach(_ exchange: any TransportTask, attempt number: Int) {
        if step({ $0.attach(exchange, attempt: number) }) == nil { exchange.cancel() }
    }

    /// The last attempt (`number`, or the cache read when nil) is done: running → completing, and
    /// the deadline is put aside. Its route and the request's deadline, or nil when the request
    /// ended or moved on meanwhile.
    func complete(attempt number: Int?) -> (route: Route, deadline: DispatchTime?)? {
        var deadline: DispatchTime?
        let route = step { machine in
            defer { deadline = machine.timers.deadline }
            return machine.complete(attempt: number)
        }
        return route.map { ($0, deadline) }
    }

    /// A processed result asks for another attempt: completing → waiting, with the deadline
    /// armed again — except while suspended (held at a `RestartGate`, which may take as long as a
    /// user takes to log in). False when a cancel came first.
    func wait(_ reason: WaitReason) -> Bool {
        step { $0.wait(reason) } != nil
    }

    /// The wait is over: waiting → running; a suspended request gets a fresh deadline. False when
    /// a cancel or the deadline came first.
    func resume() -> Bool {
        step { $0.resume(now: .now()) } != nil
    }

    /// Claims the right to deliver a processed result: `.now` once, and only if nothing else
    /// (cancel, timeout) finished the request first; `.afterSend` while `send` runs, unless
    /// `deferred` (the claim already runs after it).
    func claim(deferred: Bool = false) -> CallStateMachine.Delivery {
        let (delivery, ending) = locked { guarded -> (CallStateMachine.Delivery, Ending?) in
            let delivery = guarded.machine.claim(deferred: deferred)
            return (delivery, delivery == .now ? Self.takeEnding(&guarded) : nil)
        }
        if let ending { announce(ending) }
        return delivery
    }

    // MARK: - Events from outside the call

    /// A terminal action takes the call and the end observer out of the guarded state with it.
    private static func takeEnding(_ guarded: inout Guarded) -> Ending {
        defer { guarded.call = nil; guarded.onFinished = nil }
        return (guarded.call, guarded.onFinished)
    }

    /// Cancels the request for `reason`: it ends with `TernError.cancelled(reason)`, delivered
    /// unless cancellation is silent for it (or `silently` is set). Idempotent, from any phase.
    func cancel(_ reason: TernError.CancellationReason, silently: Bool = false) {
        guard let call = finishEarly({ $0.cancel(reason) }) else { return }
        call.cancelled(reason)
        if reportsCancellation && !silently { call.deliverEarly(.cancelled(reason)) }
    }

    /// Ends the request at once with `error`, delivered through its call (if it has begun one);
    /// with `attempt`, only while that attempt is the current one and running (its adapter or
    /// its body on disk failed).
    func fail(_ error: TernError, attempt number: Int? = nil) {
        finishEarly { $0.fail(attempt: number) }?.deliverEarly(error)
    }

    /// Called by the scheduler when the armed time has come. An idle attempt fails only after its
    /// exchange has delivered what it already received (`heardOut`): a transport whose events
    /// wait for a queue that a busy process holds up is not a silent server.
    func deadlinePassed(heardOut: Bool = false) {
        let now = DispatchTime.now()
        let lastSignOfLife = signsOfLife.latest(now: now)
        let (expiry, total, ending) = locked { guarded -> (CallStateMachine.Expiry, TimeInterval, Ending?) in
            let expiry = guarded.machine.deadlinePassed(now: now, lastActivity: lastSignOfLife, asksToHearOut: !heardOut)
            switch expiry {
            case .finishEarly: return (expiry, guarded.machine.timers.total ?? 0, Self.takeEnding(&guarded))
            case .timeOutAttempt: return (expiry, 0, (guarded.call, nil))
            case .rearm, .hearOut, .stale: return (expiry, 0, nil)
            }
        }
        switch expiry {
        case .hearOut(let exchange):
            exchange.afterPendingEvents { [self] in deadlinePassed(heardOut: true) }
        case .timeOutAttempt(let attempt, let seconds, let exchange):
            // Timeout first: libcurl's instant cancel would otherwise be reported first, as a cancel.
            ending?.call?.attemptTimedOut(attempt, after: seconds)
            exchange?.cancel()
        case .finishEarly(let exchange, let change):
            finishedEarly(exchange: exchange, change, ending)?.deliverEarly(.deadlineExceeded(after: total))
        case .rearm(let change):
            apply(change)
        case .stale:
            break
        }
    }

    /// Pauses (or resumes) reading the running exchange's response: a streamed body's reader
    /// has fallen behind (or caught up).
    func setExchangePaused(_ paused: Bool) {
        guard let exchange = read(\.exchange) else { return }
        signsOfLife.setHeldByReader(paused)
        if paused { exchange.suspend() } else { exchange.resume() }
    }

    /// Runs an event that may finish the request early; when it does, cancels its exchange and
    /// deadline and returns the call to deliver the terminal error to (nil if it has none).
    private func finishEarly(_ event: (inout CallStateMachine) -> CallStateMachine.Ending) -> (any CallTerminal)? {
        let (ending, taken) = locked { guarded -> (CallStateMachine.Ending, Ending?) in
            let ending = event(&guarded.machine)
            guard case .finishEarly = ending else { return (ending, nil) }
            return (ending, Self.takeEnding(&guarded))
        }
        guard case .finishEarly(let exchange, let change) = ending else { return nil }
        return finishedEarly(exchange: exchange, change, taken)
    }

    /// Carries out an early finish: progress, timer and exchange stop, the end is announced.
    private func finishedEarly(
        exchange: (any TransportTask)?, _ change: CallStateMachine.TimerChange, _ ending: Ending?
    ) -> (any CallTerminal)? {
        guard let ending else { return nil }
        progress?.stop()
        apply(change)
        exchange?.cancel()
        announce(ending)
        return ending.call
    }

    /// Tells the end observer and the call that the request reached `.finished`, outside the
    /// lock: the call may hold the last reference to the handle.
    private func announce(_ ending: Ending) {
        ending.onFinished?(self)
        ending.call?.ended()
    }
}
