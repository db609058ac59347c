import Foundation

/// What `CallStateMachine`'s events answer: one type per kind of event, each able to say only
/// what that event can lead to.
extension CallStateMachine {
    /// The answer to a step of the call's own path: begin, the next attempt, adapted, attach,
    /// complete, wait, resume.
    enum Step: Sendable {
        /// Still the call's turn: go on from `route`, after the timer change.
        case proceed(Route, TimerChange)
        /// The request ended or moved on meanwhile: the step does nothing (an exchange that came
        /// too late is cancelled).
        case stale
    }

    /// What a cancel or a failure does.
    enum Ending: Sendable {
        /// Terminal: cancel the exchange, carry out the timer change, deliver the error.
        case finishEarly(exchange: (any TransportTask)?, TimerChange)
        /// The request had already finished.
        case stale
    }

    /// What the armed time does when it comes.
    enum Expiry: Sendable {
        /// Nothing expired (a stale time, or a sign of life since): carry out the timer change.
        case rearm(TimerChange)
        /// The running attempt went idle too long or ran out of its own limit (`after` seconds):
        /// it fails with a timeout, which the retry policy may try again, and its exchange is
        /// cancelled.
        case timeOutAttempt(Int, after: TimeInterval, exchange: (any TransportTask)?)
        /// The running attempt's idle timeout alone has passed: ask its exchange to deliver what
        /// is on its way (`TransportTask.afterPendingEvents`), then decide again.
        case hearOut(any TransportTask)
        /// Terminal: the request's deadline passed.
        case finishEarly(exchange: (any TransportTask)?, TimerChange)
        /// Nothing runs that a clock could end.
        case stale
    }

    /// Whether a processed result's callback may run.
    enum Delivery: Sendable, Equatable {
        /// Terminal: it runs now.
        case now
        /// `send` has not returned yet: run it later, and claim again then.
        case afterSend
        /// Something else (a cancel, the deadline) finished the request first: drop it.
        case stale
    }
}
