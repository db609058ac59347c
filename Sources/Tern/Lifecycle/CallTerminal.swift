import Foundation

/// What a core delivers an early terminal error to: its `Call`.
protocol CallTerminal: AnyObject, Sendable {
    /// Delivers `error`, which ended the request before its attempts did (cancel, timeout, a
    /// failure inside `send`); the right to deliver is already claimed.
    func deliverEarly(_ error: TernError)
    /// The request was cancelled for `reason` (whether or not that is reported to its callback).
    func cancelled(_ reason: TernError.CancellationReason)
    /// Attempt `attempt` went idle for `seconds` or ran out of its own limit
    /// (`RetryPolicy.attemptTimeout`): it fails with `TernError.timedOut`, and the retry stage
    /// may try again.
    func attemptTimedOut(_ attempt: Int, after seconds: TimeInterval)
    /// The request reached `.finished`, however it ended (its callback may still be on its
    /// way): release what it holds outside memory, like temporary files.
    func ended()
}

extension RequestCore {
    /// How a terminal result gets the right to be delivered.
    enum Claim {
        /// Already claimed (cancel, timeout, an error inside `send`); deliver on the callback queue.
        case claimed
        /// Claim when the callback runs; drop it if something else finished the request first.
        case onDelivery
    }
}
