import Foundation

/// Where one request stands across its attempts, as a plain value: no lock, no callbacks, no
/// clock of its own. Each event is a `mutating` method that returns what to do next, as a value
/// that can only say what is possible after that event (`CallStateMachine+Actions.swift`); the
/// owner (`RequestLifecycle`) holds it under one lock and hands the action to whoever carries it out,
/// after unlocking.
///
/// ```
/// created ─begin→ running ─complete→ completing ─claim→ finished
///                   ↑  ↻ next attempt     │
///                   └──resume── waiting ←─wait
/// ```
/// Cancel, fail and a passed deadline finish it from any state but `finished` (the deadline only
/// while running or waiting). Two actions are terminal, a `finishEarly` and `Delivery.now`, and a
/// run of events produces at most one of them: after it every event is stale.
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

    // MARK: Events

    /// The call begins: created → running.
    mutating func begin() -> Step {
        guard case .created = state else { return .stale }
        state = .running(Route(), exchange: nil)
        return .proceed(Route(), .keep)
    }

    /// `send` returned: callbacks may run inline from now on.
    mutating func markSent() { isInsideSend = false }

    /// Starts the clocks (lengths in seconds; a non-finite or non-positive one sets none): the
    /// idle timeout and the whole request's deadline from `now`, an attempt's limit as each
    /// attempt starts.
    mutating func startTimers(idle: TimeInterval, attemptLimit: TimeInterval?, total: TimeInterval, now: DispatchTime) -> Step {
        guard isRunning else { return .stale }
        func length(_ seconds: TimeInterval?) -> TimeInterval? { seconds.flatMap { $0.isFinite && $0 > 0 ? $0 : nil } }
        timers = Timers(idle: length(idle), attemptLimit: length(attemptLimit), total: length(total), attemptStart: now)
        timers.deadline = timers.total.map { now + $0 }
        return .proceed(route, arm(timers.expiry(lastActivity: nil)))
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
    ) -> Step {
        // A retry follows a completed attempt; a redirect only the running one.
        guard case .running(var route, _) = state, route.attempt == previous, redirect == nil || route.isLive(previous) else {
            return .stale
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
        return .proceed(route, arm(timers.expiry(lastActivity: nil)))
    }

    /// Attempt `number`'s adapters (or the wait for the network) made `request` of it.
    mutating func adapted(_ request: URLRequest, attempt number: Int) -> Step {
        guard case .running(var route, let exchange) = state, route.isLive(number) else { return .stale }
        route.request = request
        state = .running(route, exchange: exchange)
        return .proceed(route, .keep)
    }

    /// Attempt `number`'s exchange started; stale: the exchange is to be cancelled.
    mutating func attach(_ exchange: any TransportTask, attempt number: Int) -> Step {
        guard case .running(let route, _) = state, route.isLive(number) else { return .stale }
        state = .running(route, exchange: exchange)
        return .proceed(route, .keep)
    }

    /// The last attempt (`number`, or the cache read when nil) is done: running → completing.
    mutating func complete(attempt number: Int?) -> Step {
        guard case .running(var route, _) = state, number.map(route.isLive) ?? true else { return .stale }
        route.completed = number ?? route.completed
        state = .completing(route)
        return .proceed(route, arm(nil))
    }

    /// The processed result asks for another attempt: completing → waiting. The request's
    /// deadline runs on meanwhile, except while suspended.
    mutating func wait(_ reason: WaitReason) -> Step {
        guard case .completing(let route) = state else { return .stale }
        state = .waiting(reason, route)
        return .proceed(route, arm(reason == .suspended ? nil : timers.deadline))
    }

    /// The wait is over: waiting → running. A suspended request gets a fresh deadline.
    mutating func resume(now: DispatchTime) -> Step {
        guard case .waiting(let reason, let route) = state else { return .stale }
        state = .running(route, exchange: nil)
        if reason == .suspended, let total = timers.total { timers.deadline = now + total }
        timers.attemptStart = now
        return .proceed(route, arm(timers.expiry(lastActivity: nil)))
    }

    /// The armed time came, at `now`; the running attempt last showed life at `lastActivity`.
    /// The whole request's deadline ends it; an idle or over-long attempt is timed out; otherwise
    /// (a sign of life since, or a stale timer) the next time is armed.
    /// With `asksToHearOut`, an idle attempt that has an exchange is heard out (`.hearOut`)
    /// before it times out; the scheduler's time is forgotten meanwhile, so that an attempt
    /// started before the verdict arms its own.
    mutating func deadlinePassed(now: DispatchTime, lastActivity: DispatchTime?, asksToHearOut: Bool = false) -> Expiry {
        timers.armedAt = nil  // the scheduler forgets a time once it fired
        if let deadline = timers.deadline, deadline <= now, phase == .running, !isSuspended,
            case .finishEarly(let exchange, let change) = finishEarly(cancellation: nil)
        {
            return .finishEarly(exchange: exchange, change)
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
            return .rearm(arm(timers.expiry(lastActivity: lastActivity)))
        case .waiting(let reason, _) where reason != .suspended && timers.deadline != nil:
            return .rearm(arm(timers.deadline))
        case .created, .waiting, .completing, .finished:
            return .stale
        }
    }

    /// Whether the request is held at a `RestartGate`.
    private var isSuspended: Bool { waitReason == .suspended }

    /// Cancels the request for `reason`, from any state but `finished`.
    mutating func cancel(_ reason: TernError.CancellationReason) -> Ending {
        finishEarly(cancellation: reason)
    }

    /// Ends the request with an error, from any state but `finished`; with `attempt`, only while
    /// that attempt is the running one (its adapter failed).
    mutating func fail(attempt number: Int? = nil) -> Ending {
        if let number {
            guard case .running(let route, _) = state, route.isLive(number) else { return .stale }
        }
        return finishEarly(cancellation: nil)
    }

    /// The processed result's callback is to run: completing → finished, unless something else
    /// finished the request first. Inside `send` it waits (`.afterSend`), unless `deferred` says
    /// it already runs after `send` returned.
    mutating func claim(deferred: Bool = false) -> Delivery {
        guard case .completing(let route) = state else { return .stale }
        if isInsideSend && !deferred { return .afterSend }
        state = .finished(route, cancellation: nil)
        return .now
    }

    private mutating func finishEarly(cancellation: TernError.CancellationReason?) -> Ending {
        if case .finished = state { return .stale }
        let exchange = self.exchange
        state = .finished(route, cancellation: cancellation)
        return .finishEarly(exchange: exchange, arm(nil))
    }
}

extension CallStateMachine.Route {
    /// Whether attempt `number` is the one running: the current number, its outcome not yet taken.
    func isLive(_ number: Int) -> Bool { number == attempt && number > completed }
}
