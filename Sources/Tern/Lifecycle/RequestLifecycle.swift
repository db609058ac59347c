import Foundation

/// One request's lifecycle: its `CallStateMachine` under one lock, and the effects of its
/// actions (the deadline timer, cancelling the exchange, the early end), carried out after
/// unlocking. Exactly one terminal outcome is delivered whatever races between attempts, a
/// timeout and the cancellation APIs:
/// - cancellation and the deadline finish the request at once, from any phase, and deliver their
///   error through `deliverEarly`;
/// - a processed result finishes the request only when its callback actually runs (`claim()`),
///   so a cancellation that comes while it is processed or queued still wins, and no success or
///   failure ever arrives after a cancel call returns.
///
/// `Call` is its one subclass and carries out what only it can (delivering, timing out an
/// attempt, cleaning up); a request that fails inside `send` is a bare lifecycle, which delivers
/// nothing itself. The per-exchange state (response head, body, timings) lives in each `Attempt`.
/// `RequestHandle` is its public face; the client's registry, the transport and the deadline
/// scheduler hold the lifecycle, and it holds its handle weakly, so a handle can be released while
/// its request runs.
// Sendable: not final only so that `Call` can extend it; every stored property is a constant of a
// Sendable type or the lock, and `Call` adds only constants.
class RequestLifecycle: @unchecked Sendable {
    typealias WaitReason = CallStateMachine.WaitReason
    typealias Route = CallStateMachine.Route
    /// What the request's lock guards (read and changed only by `RequestLifecycle`'s own files).
    struct Guarded {
        var machine = CallStateMachine()
        /// Whether a call began: only then does an early end deliver anything.
        var begun = false
        /// The handle, kept alive until the end when the lifetime says the engine owns it.
        var retainedHandle: RequestHandle?
        var onFinished: (@Sendable (RequestLifecycle) -> Void)?
        #if DEBUG
        /// How many times the lock was taken: the cost of a request's walk, checked by a test.
        var takes = 0
        #endif
    }

    /// What a terminal action hands over: whether a call began, the handle it kept, and who
    /// waits for the end.
    typealias Ending = (begun: Bool, handle: RequestHandle?, onFinished: (@Sendable (RequestLifecycle) -> Void)?)

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
    let weakHandle = Weak<RequestHandle>()

    private static let counter = Locked<UInt64>(0)

    /// The next request number.
    static func nextID() -> UInt64 {
        counter.withLock {
            $0 += 1
            return $0
        }
    }

    /// A lifecycle numbered `id` (by default the next number).
    init(
        id: UInt64 = RequestLifecycle.nextID(), method: HTTPMethod, url: URL?, tags: Set<String> = [],
        lifetime: Lifetime = .untilFinished, reportsCancellation: Bool = true, identity: RequestIdentity? = nil,
        progress: ProgressReporter? = nil
    ) {
        self.id = id
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
    func locked<T>(_ body: (inout Guarded) -> T) -> T {
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

    func apply(_ change: CallStateMachine.TimerChange) {
        switch change {
        case .keep: break
        case .arm(let at): DeadlineScheduler.shared.add(self, at: at)
        case .disarm: DeadlineScheduler.shared.remove(id)
        }
    }

    /// Moves to `.running`: from now on an early end is delivered. Keeps `handle` alive until
    /// the end when the lifetime says the engine owns it.
    func begin(retaining handle: RequestHandle?) {
        locked { guarded in
            guard case .proceed = guarded.machine.begin() else { return }
            guarded.begun = true
            guarded.retainedHandle = handle
        }
    }

    /// The request was admitted: starts its clocks (seconds; `.infinity` for none) — the idle
    /// `timeout` of each attempt, an attempt's own limit, the deadline of the whole request — and
    /// keeps `onFinished`, which runs once, right after the request reaches `.finished` (at once
    /// if a cancel got there first). An idle or over-long attempt fails with
    /// `TernError.timedOut`, which the retry policy may try again; a passed deadline ends the
    /// request with `TernError.deadlineExceeded`.
    func start(
        idle: TimeInterval, attemptLimit: TimeInterval?, deadline: TimeInterval, onFinished: @escaping @Sendable (RequestLifecycle) -> Void
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

    /// `CallStateMachine.nextAttempt`: the new attempt's route, or nil once not running or past `previous`.
    func nextAttempt(after previous: Int, sending request: URLRequest, following redirect: (Redirect, took: TimeInterval)? = nil) -> Route?
    {
        step { $0.nextAttempt(after: previous, sending: request, following: redirect, now: .now()) }
    }

    /// `CallStateMachine.adapted`: false (send nothing) when the request ended or moved on meanwhile.
    func adapted(_ request: URLRequest, attempt number: Int) -> Bool {
        step { $0.adapted(request, attempt: number) } != nil
    }

    /// Keeps the exchange of attempt `number` so that a cancel can stop it; cancels it at once if
    /// the request ended or moved on meanwhile.
    func attach(_ exchange: any TransportTask, attempt number: Int) {
        if step({ $0.attach(exchange, attempt: number) }) == nil { exchange.cancel() }
    }

    /// `CallStateMachine.complete`, the deadline put aside: the route and the request's deadline,
    /// or nil when the request ended or moved on meanwhile.
    func complete(attempt number: Int?) -> (route: Route, deadline: DispatchTime?)? {
        var deadline: DispatchTime?
        let route = step { machine in
            defer { deadline = machine.timers.deadline }
            return machine.complete(attempt: number)
        }
        return route.map { ($0, deadline) }
    }

    /// `CallStateMachine.wait`: false when a cancel came first.
    func wait(_ reason: WaitReason) -> Bool {
        step { $0.wait(reason) } != nil
    }

    /// `CallStateMachine.resume`: false when a cancel or the deadline came first.
    func resume() -> Bool {
        step { $0.resume(now: .now()) } != nil
    }

    /// Claims the right to deliver a processed result: `.now` once, and only if nothing else
    /// (cancel, timeout) finished the request first; `.afterSend` while `send` runs, unless
    /// `deferred` (the claim already runs after it). With `.now` comes the handle the engine
    /// kept alive, for the callback.
    func claim(deferred: Bool = false) -> (delivery: CallStateMachine.Delivery, handle: RequestHandle?) {
        let (delivery, ending) = locked { guarded -> (CallStateMachine.Delivery, Ending?) in
            let delivery = guarded.machine.claim(deferred: deferred)
            return (delivery, delivery == .now ? Self.takeEnding(&guarded) : nil)
        }
        if let ending { announce(ending) }
        return (delivery, ending?.handle)
    }

    // MARK: - What the call carries out

    /// Delivers `error`, which ended the request before its attempts did (cancel, timeout, a
    /// failure inside `send`), with the handle the engine kept; the right to deliver is claimed.
    func deliverEarly(_ error: TernError, handle: RequestHandle?) {}

    /// The request was cancelled for `reason` (whether or not that is reported to its callback).
    func cancelled(_ reason: TernError.CancellationReason) {}

    /// Attempt `attempt` went idle for `seconds` or ran out of its own limit
    /// (`RetryPolicy.attemptTimeout`): it fails with `TernError.timedOut`, which the retry stage
    /// may try again.
    func attemptTimedOut(_ attempt: Int, after seconds: TimeInterval) {}

    /// The request reached `.finished`, however it ended (its callback may still be on its way):
    /// release what it holds outside memory, like temporary files.
    func ended() {}
}
