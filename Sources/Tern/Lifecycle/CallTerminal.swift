import Foundation

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
