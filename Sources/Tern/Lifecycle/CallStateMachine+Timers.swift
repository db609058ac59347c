import Foundation

extension CallStateMachine {
    /// The request's clocks, in seconds; nil where there is none.
    struct Timers: Sendable {
        /// No sign of life from the running attempt for this long fails it (`.timedOut`).
        var idle: TimeInterval?
        /// Each attempt's own limit (`.timedOut`, which the retry policy may try again).
        var attemptLimit: TimeInterval?
        /// The whole request's limit, waits between attempts included (`.deadlineExceeded`).
        var total: TimeInterval?
        /// When the running attempt started (or the request, before its first attempt).
        var attemptStart: DispatchTime?
        /// When the whole request's deadline passes.
        var deadline: DispatchTime?
        /// The time the scheduler holds for this request, if any.
        var armedAt: DispatchTime?

        /// What the idle timeout counts from: the attempt's last sign of life, or its start when
        /// it has shown none since (an older one belongs to an attempt before it).
        static func idleBase(start: DispatchTime, lastActivity: DispatchTime?) -> DispatchTime {
            lastActivity.map { max($0, start) } ?? start
        }

        /// The first time a running attempt can expire, given its last sign of life.
        func expiry(lastActivity: DispatchTime?) -> DispatchTime? {
            guard let start = attemptStart else { return deadline }
            let base = Self.idleBase(start: start, lastActivity: lastActivity)
            // Pairwise, not `[…].compactMap { $0 }.min()`: that allocated two arrays per call.
            return Self.earlier(Self.earlier(idle.map { base + $0 }, attemptLimit.map { start + $0 }), deadline)
        }

        /// Seconds from `now` until `time`, 0 once it has passed; nil without a time.
        static func seconds(until time: DispatchTime?, from now: DispatchTime) -> TimeInterval? {
            guard let at = time?.uptimeNanoseconds else { return nil }
            return at > now.uptimeNanoseconds ? Double(at - now.uptimeNanoseconds) / 1e9 : 0
        }

        /// The earlier of two times, either of which may be missing.
        private static func earlier(_ first: DispatchTime?, _ second: DispatchTime?) -> DispatchTime? {
            guard let first, let second else { return first ?? second }
            return min(first, second)
        }
    }

    /// What to do with the deadline timer.
    enum TimerChange: Equatable, Sendable {
        case keep
        case arm(DispatchTime)
        case disarm
    }
}
