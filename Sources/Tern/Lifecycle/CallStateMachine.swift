import Foundation

/// Where one request stands across its attempts, as a plain value: no lock, no callbacks, no
/// clock of its own. Each event is a `mutating` method that returns what to do next; the owner
/// (`RequestCore`) holds it under one lock and carries the action out after unlocking.
///
/// ```
/// created ─begin→ running ─complete→ completing ─claim→ finished
///                   ↑  ↻ next attempt     │
///                   └──resume── waiting ←─wait
/// ```
/// Cancel, fail and a passed deadline finish it from any state but `finished` (the deadline only
/// while running or waiting). Two actions are terminal, `.finishEarly` and `.deliver`, and a run
/// of events produces at most one of them: after it every event is `.ignore`d.
///
/// Three clocks run (`Timers`), all through one time armed with the deadline scheduler: the idle
/// timeout (no sign of life from the running attempt for that long fails the attempt), an
/// attempt's own limit (`RetryPolicy.attemptTimeout`), and the deadline of the whole request,
/// which also runs during the waits between attempts (but not while held at a `RestartGate`:
/// the request gets a fresh deadline when the gate restarts it).
///
/// An attempt's events count only while it is the current one: each carries its number, and a
/// number that is not the running attempt's is stale (the request moved on, or ended).
struct CallStateMachine: Sendable {
    /// Why a request waits between attempts.
    enum WaitReason: Equatable, Sendable {
        /// A backoff delay before a retry.
        case beforeNextAttempt
        /// A credential is being refreshed (a one-shot `RestartGate`).
        case credential
        /// Held at a `RestartGate` for as long as it takes; the deadline does not run meanwhile.
        case suspended
    }

    /// The attempts so far.
    struct Route: Sendable {
        /// The current (or last) attempt's number; 0 before the first.
        var attempt = 0
        /// The last attempt whose outcome was taken (`complete`). Between the end of a retry's
        /// wait and the start of the next attempt the route still has that attempt's number, and
        /// a late event of it (the cancelled exchange of a timed-out attempt) must stay stale.
        var completed = 0
        /// What the current attempt sends, after its adapters.
        var request: URLRequest?
        /// The same before its adapters: where a retry or a restart starts again.
        var unadapted: URLRequest?
        /// The redirects followed to reach the current attempt.
        var redirects: [Redirect] = []
        /// Seconds the exchanges answered by `redirects` took.
        var redirectTime: TimeInterval = 0
    }

    /// The states; each carries what only it has.
    enum State: Sendable {
        case created
        /// An attempt is being adapted, in the transport (its exchange, once attached), or the
        /// cache is being read.
        case running(Route, exchange: (any TransportTask)?)
        /// Between two attempts.
        case waiting(WaitReason, Route)
        /// The last attempt is done; its result is being processed or waits for its callback.
        case completing(Route)
        /// Delivered, or ended early (`cancellation` says whether by a cancel).
        case finished(Route, cancellation: TernError.CancellationReason?)
    }

    /// What the owner does after an event.
    enum Action: Sendable {
        /// Nothing: the event is stale (the request ended or moved on).
        case ignore
        /// Go on.
        case proceed(TimerChange)
        /// Start attempt `number`.
        case startAttempt(Int, TimerChange)
        /// The exchange belongs to an attempt that is no longer current: cancel it.
        case cancelExchange(any TransportTask)
        /// The running attempt went idle too long or ran out of its own limit (`after` seconds):
        /// it fails with a timeout, which the retry policy may try again, and its exchange is
        /// cancelled.
        case timeOutAttempt(Int, after: TimeInterval, exchange: (any TransportTask)?)
        /// The running attempt's idle timeout alone has passed: ask its exchange to deliver what
        /// is on its way (`TransportTask.afterPendingEvents`), then decide again.
        case hearOut(any TransportTask)
        /// Terminal: the request ended before its attempts did (a cancel, a failure, its deadline);
        /// cancel the exchange, then deliver the error that ended it.
        case finishEarly(exchange: (any TransportTask)?, TimerChange)
        /// Terminal: deliver the processed result.
        case deliver
    }

    private(set) var state = State.created
    private(set) var timers = Timers()
    /// Whether `send` is still running: a result produced before it returns (a synchronous
    /// transport, an early failure) must be delivered asynchronously.
    private(set) var isInsideSend = true

    // MARK: Queries

    /// The attempts so far.
    var route: Route {
        switch state {
        case .created: Route()
        case .running(let route, _), .waiting(_, let route), .completing(let route), .finished(let route, _): route
        }
    }

    /// Whether an attempt (or the cache read) is under way.
    var isRunning: Bool {
        if case .running = state { true } else { false }
    }

    /// The public phase.
    var phase: RequestHandle.Phase {
        switch state {
        case .created: .created
        case .running, .waiting: .running
        case .completing: .completing
        case .finished: .finished
        }
    }

    /// Why the request waits, while it waits between attempts.
    var waitReason: WaitReason? {
        if case .waiting(let reason, _) = state { reason } else { nil }
    }

    /// Why the request was cancelled, if it was.
    var cancellation: TernError.CancellationReason? {
        if case .finished(_, let reason) = state { reason } else { nil }
    }

    /// The running attempt's exchange.
    var exchange: (any TransportTask)? {
        if case .running(_, let exchange) = state { exchange } else { nil }
    }

    /// Seconds left until the request's deadline at `now`; nil when it has none, or when each
    /// attempt has its own (waits between attempts then do not count).
    func secondsUntilDeadline(now: DispatchTime) -> TimeInterval? {
        guard let at = timers.deadline?.uptimeNanoseconds else { return nil }
        let now = now.uptimeNanoseconds
        return at > now ? Double(at - now) / 1e9 : 0
    }

    // MARK: Events

    /// The call begins: created → running.
    mutating func begin() -> Action {
        guard case .created = state else { return .ignore }
        state = .running(Route(), exchange: nil)
        return .proceed(.keep)
    }

    /// `send` returned: callbacks may run inline from now on.
    mutating func markSent() { isInsideSend = false }

    /// Starts the clocks (lengths in seconds; a non-finite or non-positive one sets none): the
    /// idle timeout and the whole request's deadline from `now`, an attempt's limit as each
    /// attempt starts.
    mutating func startTimers(idle: TimeInterval, attemptLimit: TimeInterval?, total: TimeInterval, now: DispatchTime) -> Action {
        guard isRunning else { return .ignore }
        func length(_ seconds: TimeInterval?) -> TimeInterval? { seconds.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } }
        timers = Timers(idle: length(idle), attemptLimit: length(attemptLimit), total: length(total), attemptStart: now)
        timers.deadline = timers.total.map { now + $0 }
        return .proceed(arm(timers.expiry(lastActivity: nil)))
    }

    /// The timer change that arms `time` (or disarms, for none). A time later than the one
    /// armed is kept as it is: the earlier firing finds nothing expired and arms the right time
    /// then (the first attempt, which starts just after the clocks, costs no second arming).
    private mutating func arm(_ time: DispatchTime?) -> TimerChange {
        guard let time else {
            defer { timers.armedAt = nil }
            return timers.armedAt == nil ? .keep : .disarm
        }
        if let armed = timers.armedAt, armed <= time { return .keep }
        timers.armedAt = time
        return .arm(time)
    }

    /// The attempt after `previous` sends `request`, reached by `redirect` (whose exchange took
    /// `took` s) or not.
    mutating func nextAttempt(
        after previous: Int, sending request: URLRequest, following redirect: (Redirect, took: TimeInterval)?, now: DispatchTime
    ) -> Action {
        // A retry follows a completed attempt; a redirect only the running one.
        guard case .running(var route, _) = state, route.attempt == previous, redirect == nil || route.isLive(previous) else {
            return .ignore
        }
        route.attempt += 1
        route.request = request
        route.unadapted = request
        if let redirect {
            route.redirects.append(redirect.0)
            route.redirectTime += redirect.took
        }
        state = .running(route, exchange: nil)
        timers.attemptStart = now
        return .startAttempt(route.attempt, arm(timers.expiry(lastActivity: nil)))
    }

    /// Attempt `number`'s adapters (or the wait for the network) made `request` of it.
    mutating func adapted(_ request: URLRequest, attempt number: Int) -> Action {
        guard case .running(var route, let exchange) = state, route.isLive(number) else { return .ignore }
        route.request = request
        state = .running(route, exchange: exchange)
        return .proceed(.keep)
    }

    /// Attempt `number`'s exchange started.
    mutating func attach(_ exchange: any TransportTask, attempt number: Int) -> Action {
        guard case .running(let route, _) = state, route.isLive(number) else { return .cancelExchange(exchange) }
        state = .running(route, exchange: exchange)
        return .proceed(.keep)
    }

    /// The last attempt (`number`, or the cache read when nil) is done: running → completing.
    mutating func complete(attempt number: Int?) -> Action {
        guard case .running(var route, _) = state, number.map(route.isLive) ?? true else { return .ignore }
        route.completed = number ?? route.completed
        state = .completing(route)
        return .proceed(arm(nil))
    }

    /// The processed result asks for another attempt: completing → waiting. The request's
    /// deadline runs on meanwhile, except while suspended.
    mutating func wait(_ reason: WaitReason) -> Action {
        guard case .completing(let route) = state else { return .ignore }
        state = .waiting(reason, route)
        return .proceed(arm(reason == .suspended ? nil : timers.deadline))
    }

    /// The wait is over: waiting → running. A suspended request gets a fresh deadline.
    mutating func resume(now: DispatchTime) -> Action {
        guard case .waiting(let reason, let route) = state else { return .ignore }
        state = .running(route, exchange: nil)
        if reason == .suspended, let total = timers.total { timers.deadline = now + total }
        timers.attemptStart = now
        return .proceed(arm(timers.expiry(lastActivity: nil)))
    }

    /// The armed time came, at `now`; the running attempt last showed life at `lastActivity`.
    /// The whole request's deadline ends it (`.finishEarly`); an idle or over-long attempt is
    /// timed out; otherwise (a sign of life since, or a stale timer) the next time is armed.
    /// With `asksToHearOut`, an idle attempt that has an exchange is heard out (`.hearOut`)
    /// before it times out; the scheduler's time is forgotten meanwhile, so that an attempt
    /// started before the verdict arms its own.
    mutating func deadlinePassed(now: DispatchTime, lastActivity: DispatchTime?, asksToHearOut: Bool = false) -> Action {
        timers.armedAt = nil  // the scheduler forgets a time once it fired
        if let deadline = timers.deadline, deadline <= now, phase == .running, !isSuspended {
            return finishEarly(cancellation: nil)
        }
        switch state {
        case .running(let route, let exchange):
            let start = timers.attemptStart ?? now
            if let limit = timers.attemptLimit, start + limit <= now {
                state = .running(route, exchange: nil)
                return .timeOutAttempt(route.attempt, after: limit, exchange: exchange)
            }
            if let idle = timers.idle, Timers.idleBase(start: start, lastActivity: lastActivity) + idle <= now {
                if asksToHearOut, let exchange { return .hearOut(exchange) }
                state = .running(route, exchange: nil)
                return .timeOutAttempt(route.attempt, after: idle, exchange: exchange)
            }
            return .proceed(arm(timers.expiry(lastActivity: lastActivity)))
        case .waiting(let reason, _) where reason != .suspended && timers.deadline != nil:
            return .proceed(arm(timers.deadline))
        case .created, .waiting, .completing, .finished:
            return .ignore
        }
    }

    /// Whether the request is held at a `RestartGate`.
    private var isSuspended: Bool { waitReason == .suspended }

    /// Cancels the request for `reason`, from any state but `finished`.
    mutating func cancel(_ reason: TernError.CancellationReason) -> Action {
        finishEarly(cancellation: reason)
    }

    /// Ends the request with an error, from any state but `finished`; with `attempt`, only while
    /// that attempt is the running one (its adapter failed).
    mutating func fail(attempt number: Int? = nil) -> Action {
        if let number {
            guard case .running(let route, _) = state, route.isLive(number) else { return .ignore }
        }
        return finishEarly(cancellation: nil)
    }

    /// The processed result's callback runs: completing → finished, unless something else
    /// finished the request first.
    mutating func claim() -> Action {
        guard case .completing(let route) = state else { return .ignore }
        state = .finished(route, cancellation: nil)
        return .deliver
    }

    private mutating func finishEarly(cancellation: TernError.CancellationReason?) -> Action {
        if case .finished = state { return .ignore }
        let exchange = self.exchange
        state = .finished(route, cancellation: cancellation)
        return .finishEarly(exchange: exchange, arm(nil))
    }
}

extension CallStateMachine.Route {
    /// Whether attempt `number` is the one running: the current number, its outcome not yet taken.
    func isLive(_ number: Int) -> Bool { number == attempt && number > completed }
}
