import Foundation
import Testing

@testable import Tern

/// `CallStateMachine` on its own: every event in every state, cancel wins from every state, and
/// no run of events produces more than one terminal action. No transport, no clock, no sleeps.
@Suite struct CallStateMachineTests {
    typealias Machine = CallStateMachine

    /// An exchange that counts its cancels.
    final class FakeExchange: TransportTask {
        let cancels = Locked(0)
        func cancel() { cancels.withLock { $0 += 1 } }
    }

    static let now = DispatchTime(uptimeNanoseconds: 1_000_000_000)
    static let request = URLRequest(url: URL(string: "http://127.0.0.1:9/a")!)

    /// The states a request reaches, each built by the events that lead there (attempt 1, a 4 s
    /// idle timeout, a 10 s deadline, both from `now`).
    enum Start: String, CaseIterable {
        case created, running, waiting, suspended, completing, delivered, cancelled

        var machine: Machine {
            var machine = Machine()
            machine.markSent()
            guard self != .created else { return machine }
            _ = machine.begin()
            _ = machine.startTimers(idle: 4, attemptLimit: nil, total: 10, now: CallStateMachineTests.now)
            _ = machine.nextAttempt(after: 0, sending: CallStateMachineTests.request, following: nil, now: CallStateMachineTests.now)
            _ = machine.attach(FakeExchange(), attempt: 1)
            switch self {
            case .created, .running: break
            case .waiting, .suspended:
                _ = machine.complete(attempt: 1)
                _ = machine.wait(self == .waiting ? .beforeNextAttempt : .suspended)
            case .completing: _ = machine.complete(attempt: 1)
            case .delivered:
                _ = machine.complete(attempt: 1)
                _ = machine.claim()
            case .cancelled: _ = machine.cancel(.explicit)
            }
            return machine
        }
    }

    /// A timer change's suffix to an action's name.
    static func timer(_ change: Machine.TimerChange) -> String {
        switch change {
        case .keep: ""
        case .arm: "+arm"
        case .disarm: "+disarm"
        }
    }

    /// An action's name, with its timer change where it has one ("ignore" when stale).
    static func name(_ step: Machine.Step) -> String {
        if case .proceed(_, let change) = step { "proceed" + timer(change) } else { "ignore" }
    }

    /// The name of a next attempt's step: "start" and its number.
    static func start(_ step: Machine.Step) -> String {
        if case .proceed(let route, let change) = step { "start\(route.attempt)" + timer(change) } else { "ignore" }
    }

    static func name(_ ending: Machine.Ending) -> String {
        if case .finishEarly(_, let change) = ending { "finishEarly" + timer(change) } else { "ignore" }
    }

    static func name(_ expiry: Machine.Expiry) -> String {
        switch expiry {
        case .stale: "ignore"
        case .rearm(let change): "proceed" + timer(change)
        case .timeOutAttempt(let number, _, _): "timeOutAttempt\(number)"
        case .hearOut: "hearOut"
        case .finishEarly(_, let change): "finishEarly" + timer(change)
        }
    }

    static func name(_ delivery: Machine.Delivery) -> String {
        switch delivery {
        case .now: "deliver"
        case .afterSend: "afterSend"
        case .stale: "ignore"
        }
    }

    /// A machine's state's name.
    static func name(_ machine: Machine) -> String {
        switch machine.state {
        case .created: "created"
        case .running: "running"
        case .waiting(let reason, _): reason == .suspended ? "suspended" : "waiting"
        case .completing: "completing"
        case .finished(_, let cancellation): cancellation == nil ? "finished" : "cancelled"
        }
    }

    /// Every event, by name.
    static let events: [String: @Sendable (inout Machine) -> String] = [
        "begin": { (m: inout Machine) in name(m.begin()) },
        "startTimers": { (m: inout Machine) in name(m.startTimers(idle: 5, attemptLimit: nil, total: 20, now: now)) },
        "nextAttempt": { (m: inout Machine) in start(m.nextAttempt(after: 1, sending: request, following: nil, now: now)) },
        "nextAttempt(stale)": { (m: inout Machine) in start(m.nextAttempt(after: 7, sending: request, following: nil, now: now)) },
        "adapted": { (m: inout Machine) in name(m.adapted(request, attempt: 1)) },
        "adapted(stale)": { (m: inout Machine) in name(m.adapted(request, attempt: 7)) },
        "attach": { (m: inout Machine) in name(m.attach(FakeExchange(), attempt: 1)) },
        "attach(stale)": { (m: inout Machine) in name(m.attach(FakeExchange(), attempt: 7)) },
        "complete": { (m: inout Machine) in name(m.complete(attempt: 1)) },
        "complete(cache)": { (m: inout Machine) in name(m.complete(attempt: nil)) },
        "complete(stale)": { (m: inout Machine) in name(m.complete(attempt: 7)) },
        "wait": { (m: inout Machine) in name(m.wait(.beforeNextAttempt)) },
        "resume": { (m: inout Machine) in name(m.resume(now: now)) },
        "timer(stale)": { (m: inout Machine) in name(m.deadlinePassed(now: now + 1, lastActivity: nil)) },
        "timer(idle)": { (m: inout Machine) in name(m.deadlinePassed(now: now + 5, lastActivity: nil)) },
        "timer(lively)": { (m: inout Machine) in name(m.deadlinePassed(now: now + 5, lastActivity: now + 3)) },
        "timer(deadline)": { (m: inout Machine) in name(m.deadlinePassed(now: now + 11, lastActivity: now + 10)) },
        "cancel": { (m: inout Machine) in name(m.cancel(.explicit)) },
        "fail": { (m: inout Machine) in name(m.fail()) },
        "fail(attempt)": { (m: inout Machine) in name(m.fail(attempt: 1)) },
        "fail(stale)": { (m: inout Machine) in name(m.fail(attempt: 7)) },
        "claim": { (m: inout Machine) in name(m.claim()) },
    ]

    /// What each event does in each state: the action, and the state after it.
    static let expected: [String: [Start: (String, String)]] = {
        var table: [String: [Start: (String, String)]] = [:]
        for event in events.keys {
            for start in Start.allCases {
                let stays = start == .delivered ? "finished" : start.rawValue
                table[event, default: [:]][start] = ("ignore", stays)
            }
        }
        let early: [Start] = [.created, .running, .waiting, .suspended, .completing]
        // (event, in state, action, state after) where an event is not ignored.
        let changes: [(String, Start, String, String)] = [
            ("begin", .created, "proceed", "running"),
            ("startTimers", .running, "proceed+arm", "running"),
            ("nextAttempt", .running, "start2", "running"),  // later than the armed time: kept
            ("adapted", .running, "proceed", "running"),
            ("attach", .running, "proceed", "running"),
            ("complete", .running, "proceed+disarm", "completing"),
            ("complete(cache)", .running, "proceed+disarm", "completing"),
            ("wait", .completing, "proceed+arm", "waiting"),
            ("resume", .waiting, "proceed+arm", "running"),
            ("resume", .suspended, "proceed+arm", "running"),  // a fresh deadline after the gate
            // A stale or early timer arms the next time; an idle attempt times out, a lively one
            // goes on; the deadline ends the request, during a backoff too, but not at a gate.
            ("timer(stale)", .running, "proceed+arm", "running"),
            ("timer(stale)", .waiting, "proceed+arm", "waiting"),
            ("timer(idle)", .running, "timeOutAttempt1", "running"),
            ("timer(idle)", .waiting, "proceed+arm", "waiting"),
            ("timer(lively)", .running, "proceed+arm", "running"),
            ("timer(lively)", .waiting, "proceed+arm", "waiting"),
            ("timer(deadline)", .running, "finishEarly", "finished"),  // a fired time is already gone
            ("timer(deadline)", .waiting, "finishEarly", "finished"),
            ("fail(attempt)", .running, "finishEarly+disarm", "finished"),
            ("claim", .completing, "deliver", "finished"),
        ]
        for (event, start, action, state) in changes { table[event]![start] = (action, state) }
        func set(_ event: String, _ start: Start, _ action: String, _ state: String) { table[event]![start] = (action, state) }
        for start in early {
            // Armed only while running or waiting (not at a gate); created has no clock yet.
            let timer = start == .running || start == .waiting ? "+disarm" : ""
            set("cancel", start, "finishEarly" + timer, "cancelled")
            set("fail", start, "finishEarly" + timer, "finished")
        }
        return table
    }()

    @Test(arguments: Start.allCases)
    func everyEventInEveryState(from start: Start) {
        for (event, run) in Self.events.sorted(by: { $0.key < $1.key }) {
            var machine = start.machine
            let action = run(&machine)
            let (expectedAction, expectedState) = Self.expected[event]![start]!
            #expect(action == expectedAction, "\(event) in \(start)")
            #expect(Self.name(machine) == expectedState, "\(event) in \(start)")
        }
    }

    @Test(arguments: [Start.created, .running, .waiting, .suspended, .completing])
    func cancelWinsFromEveryState(from start: Start) {
        var machine = start.machine
        let exchange = machine.exchange
        guard case .finishEarly(let cancelled, _) = machine.cancel(.explicit) else {
            Issue.record("cancel in \(start) did not finish the request")
            return
        }
        // The running attempt's exchange is handed over to be cancelled, and only then.
        #expect((cancelled != nil) == (start == .running) && (exchange != nil) == (start == .running))
        #expect(machine.cancellation == .explicit && machine.phase == .finished)
        // Whatever comes after — the attempt's result, its claim, the deadline — is stale.
        for (event, run) in Self.events {
            var after = machine
            #expect(run(&after) == "ignore", "\(event) after cancel in \(start)")
            #expect(after.cancellation == .explicit, "\(event) after cancel in \(start)")
        }
    }

    @Test func anAttemptLimitTimesOutOnlyTheAttempt() {
        var machine = Machine()
        _ = machine.begin()
        #expect(Self.name(machine.startTimers(idle: .infinity, attemptLimit: 2, total: .infinity, now: Self.now)) == "proceed+arm")
        // The clocks' time is the attempt's too: no second arming.
        #expect(Self.start(machine.nextAttempt(after: 0, sending: Self.request, following: nil, now: Self.now)) == "start1")
        _ = machine.attach(FakeExchange(), attempt: 1)
        // However lively the attempt, its limit ends it.
        guard case .timeOutAttempt(1, let seconds, let handedOver) = machine.deadlinePassed(now: Self.now + 2, lastActivity: Self.now + 2)
        else {
            Issue.record("the attempt did not time out")
            return
        }
        #expect(seconds == 2 && handedOver != nil && machine.exchange == nil && machine.isRunning)
        // Its timeout is decided like any outcome: a retry waits with no clock running, and the
        // next attempt gets a limit of its own.
        #expect(Self.name(machine.complete(attempt: 1)) == "proceed")  // the fired time is gone
        #expect(Self.name(machine.wait(.beforeNextAttempt)) == "proceed")
        #expect(Self.name(machine.deadlinePassed(now: Self.now + 60, lastActivity: nil)) == "ignore")
        #expect(machine.secondsUntilDeadline(now: Self.now) == nil)
        #expect(Self.name(machine.resume(now: Self.now + 3)) == "proceed+arm")
        #expect(Self.start(machine.nextAttempt(after: 1, sending: Self.request, following: nil, now: Self.now + 3)) == "start2")
        #expect(Self.name(machine.deadlinePassed(now: Self.now + 4, lastActivity: nil)) == "proceed+arm")
    }

    /// A timed-out attempt's exchange is cancelled after its timeout was taken; the cancel's
    /// completion can arrive late, after the retry's wait is over and before the next attempt
    /// has its number. It is stale then too: it neither completes the request nor starts,
    /// adapts or fails anything, and the next attempt still starts.
    @Test func aCompletedAttemptsLateEventsStayStaleWhileTheNextOneStarts() {
        var machine = Machine()
        _ = machine.begin()
        _ = machine.startTimers(idle: .infinity, attemptLimit: 2, total: .infinity, now: Self.now)
        _ = machine.nextAttempt(after: 0, sending: Self.request, following: nil, now: Self.now)
        _ = machine.attach(FakeExchange(), attempt: 1)
        _ = machine.deadlinePassed(now: Self.now + 2, lastActivity: nil)
        #expect(Self.name(machine.complete(attempt: 1)) == "proceed")  // the timeout, taken
        #expect(Self.name(machine.wait(.beforeNextAttempt)) == "proceed")
        #expect(Self.name(machine.resume(now: Self.now + 3)) == "proceed+arm")
        // The window: running, still numbered 1.
        #expect(Self.name(machine.complete(attempt: 1)) == "ignore")
        #expect(Self.name(machine.adapted(Self.request, attempt: 1)) == "ignore")
        #expect(Self.name(machine.fail(attempt: 1)) == "ignore")
        #expect(Self.name(machine.attach(FakeExchange(), attempt: 1)) == "ignore")  // its exchange is cancelled
        let redirect = Redirect(statusCode: 302, from: Self.request.url!, to: Self.request.url!)
        #expect(
            Self.start(machine.nextAttempt(after: 1, sending: Self.request, following: (redirect, took: 0), now: Self.now + 3)) == "ignore")
        #expect(machine.isRunning)
        #expect(Self.start(machine.nextAttempt(after: 1, sending: Self.request, following: nil, now: Self.now + 3)) == "start2")
        #expect(Self.name(machine.complete(attempt: 2)).hasPrefix("proceed"))
    }

    @Test func theIdleTimeoutCountsFromTheLastSignOfLife() {
        var machine = Machine()
        _ = machine.begin()
        _ = machine.startTimers(idle: 2, attemptLimit: nil, total: .infinity, now: Self.now)
        _ = machine.nextAttempt(after: 0, sending: Self.request, following: nil, now: Self.now)
        // Chunks every second for ten seconds: never idle for 2 s.
        for second in 1...10 {
            let action = machine.deadlinePassed(now: Self.now + Double(second) + 0.5, lastActivity: Self.now + Double(second))
            guard case .rearm(.arm(let next)) = action else {
                Issue.record("second \(second): \(Self.name(action))")
                return
            }
            #expect(next == Self.now + Double(second) + 2)
        }
        // Then silence: the attempt times out 2 s after its last chunk.
        #expect(Self.name(machine.deadlinePassed(now: Self.now + 12, lastActivity: Self.now + 10)) == "timeOutAttempt1")
    }

    /// Only an idle expiry is heard out first (the exchange asked to deliver what is on its way);
    /// an attempt's limit or the deadline ends at once. While the verdict waits, the scheduler's
    /// time is forgotten, so that an attempt started meanwhile arms its own.
    @Test func onlyAnIdleExpiryHearsOutTheExchange() {
        func passed(_ machine: Machine, at seconds: Double) -> String {  // idle 4 s, deadline 10 s
            var machine = machine
            return Self.name(machine.deadlinePassed(now: Self.now + seconds, lastActivity: nil, asksToHearOut: true))
        }
        #expect(passed(Start.running.machine, at: 3) == "proceed+arm")  // not idle yet
        #expect(passed(Start.running.machine, at: 11).hasPrefix("finishEarly"))  // the deadline
        var machine = Start.running.machine
        var redirected = machine
        #expect(Self.name(machine.deadlinePassed(now: Self.now + 5, lastActivity: nil, asksToHearOut: true)) == "hearOut")
        // A sign of life delivered meanwhile: the heard-out verdict re-arms instead of timing out.
        #expect(Self.name(machine.deadlinePassed(now: Self.now + 5.1, lastActivity: Self.now + 5)) == "proceed+arm")
        #expect(Self.name(machine.deadlinePassed(now: Self.now + 9.5, lastActivity: Self.now + 5)) == "timeOutAttempt1")
        #expect(passed(machine, at: 9.6) != "hearOut")  // no exchange left
        // A redirect while the verdict waits: the next attempt arms its own time at once.
        #expect(Self.name(redirected.deadlinePassed(now: Self.now + 5, lastActivity: nil, asksToHearOut: true)) == "hearOut")
        let redirect = Redirect(statusCode: 302, from: Self.request.url!, to: Self.request.url!)
        let next = redirected.nextAttempt(after: 1, sending: Self.request, following: (redirect, took: 0), now: Self.now + 5)
        #expect(Self.start(next) == "start2+arm")
        var limited = Machine()
        _ = limited.begin()
        _ = limited.startTimers(idle: 1, attemptLimit: 2, total: .infinity, now: Self.now)
        _ = limited.nextAttempt(after: 0, sending: Self.request, following: nil, now: Self.now)
        _ = limited.attach(FakeExchange(), attempt: 1)
        #expect(passed(limited, at: 2) == "timeOutAttempt1")  // the attempt's limit
    }

    @Test func theDeadlineCountsTheWaitsAndRestartsAfterAGate() {
        var machine = Machine()
        _ = machine.begin()
        _ = machine.startTimers(idle: .infinity, attemptLimit: nil, total: 10, now: Self.now)
        _ = machine.nextAttempt(after: 0, sending: Self.request, following: nil, now: Self.now)
        _ = machine.complete(attempt: 1)
        guard case .proceed(_, .arm(let at)) = machine.wait(.beforeNextAttempt) else {
            Issue.record("a backoff wait did not keep the deadline")
            return
        }
        #expect(at == Self.now + 10)
        _ = machine.resume(now: Self.now + 4)
        #expect(machine.secondsUntilDeadline(now: Self.now + 4) == 6)
        _ = machine.nextAttempt(after: 1, sending: Self.request, following: nil, now: Self.now + 4)
        _ = machine.complete(attempt: 2)
        #expect(Self.name(machine.wait(.suspended)) == "proceed")  // nothing runs at a gate
        #expect(Self.name(machine.deadlinePassed(now: Self.now + 30, lastActivity: nil)) == "ignore")
        #expect(Self.name(machine.resume(now: Self.now + 30)) == "proceed+arm")
        #expect(machine.secondsUntilDeadline(now: Self.now + 30) == 10)
    }

    @Test func theRouteRecordsAttemptsAdaptersAndRedirects() {
        var machine = Machine()
        _ = machine.begin()
        _ = machine.nextAttempt(after: 0, sending: Self.request, following: nil, now: Self.now)
        let adapted = URLRequest(url: URL(string: "http://127.0.0.1:9/signed")!)
        _ = machine.adapted(adapted, attempt: 1)
        #expect(machine.route.request == adapted && machine.route.unadapted == Self.request)
        let redirect = Redirect(statusCode: 302, from: Self.request.url!, to: URL(string: "http://127.0.0.1:9/b")!)
        let next = URLRequest(url: redirect.to)
        #expect(Self.start(machine.nextAttempt(after: 1, sending: next, following: (redirect, took: 0.25), now: Self.now)) == "start2")
        #expect(machine.route.attempt == 2 && machine.route.redirects == [redirect] && machine.route.redirectTime == 0.25)
        #expect(machine.route.request == next && machine.route.unadapted == next)
    }

    @Test func theDeadlineLeftCountsDownAndStopsAtZero() {
        var machine = Machine()
        _ = machine.begin()
        _ = machine.startTimers(idle: 1, attemptLimit: nil, total: 3, now: Self.now)
        #expect(machine.secondsUntilDeadline(now: Self.now + 1) == 2)
        #expect(machine.secondsUntilDeadline(now: Self.now + 5) == 0)
        for length in [0, -1, .nan, .infinity] as [TimeInterval] {
            var unbounded = Machine()
            _ = unbounded.begin()
            #expect(Self.name(unbounded.startTimers(idle: length, attemptLimit: length, total: length, now: Self.now)) == "proceed")
            #expect(unbounded.secondsUntilDeadline(now: Self.now) == nil && unbounded.timers.armedAt == nil)
        }
    }

    /// A result processed inside `send` (a synchronous transport) is not claimed there: the claim
    /// waits until it runs after `send` returned, and then ends the request once.
    @Test func aResultIsClaimedOnlyAfterSendReturned() {
        var machine = Machine()
        _ = machine.begin()
        _ = machine.nextAttempt(after: 0, sending: Self.request, following: nil, now: Self.now)
        _ = machine.complete(attempt: 1)
        #expect(Self.name(machine.claim()) == "afterSend" && machine.phase == .completing)
        #expect(Self.name(machine.claim(deferred: true)) == "deliver" && machine.phase == .finished)
        #expect(Self.name(machine.claim(deferred: true)) == "ignore")
        var sent = Start.completing.machine
        #expect(Self.name(sent.claim()) == "deliver")
    }

    /// 20,000 random runs of 12 events each: at most one terminal action per run, and after it
    /// nothing but stale answers.
    @Test func noRunEverEndsTwice() {
        var generator = SeededGenerator(seed: 0x7E54)
        let names = Self.events.keys.sorted()
        var terminalRuns = 0
        for _ in 0..<20_000 {
            var machine = Start.allCases.randomElement(using: &generator)!.machine
            var terminals = machine.phase == .finished ? 1 : 0
            for _ in 0..<12 {
                let name = names.randomElement(using: &generator)!
                let wasFinished = machine.phase == .finished
                let action = Self.events[name]!(&machine)
                if action.hasPrefix("finishEarly") || action == "deliver" { terminals += 1 }
                if wasFinished { #expect(action == "ignore", "\(name) after the end") }
            }
            #expect(terminals <= 1)
            if terminals == 1 { terminalRuns += 1 }
            if machine.phase == .finished { #expect(terminals == 1) }
        }
        #expect(terminalRuns > 10_000)  // the runs do reach the end
    }
}

extension CallStateMachine {
    /// Seconds left until the request's deadline at `now`; nil when it has none.
    func secondsUntilDeadline(now: DispatchTime) -> TimeInterval? { Timers.seconds(until: timers.deadline, from: now) }
}
