import Foundation

/// The retry stage (per call): after an attempt is processed, deliver its result or wait and
/// make another attempt.
///
/// Only a failed network attempt is retried, as the retry policy says. Never when streamed chunks
/// were already handed over (they would be handed over again) or the request's body can be
/// produced only once (it would not be sent again), and never with a wait that
/// outlasts the request's deadline: that wait could only end in `.timedOut`, losing the answer in
/// hand (a 503 and its `Retry-After`, say), so that answer is delivered now instead.
struct RetryStage: Sendable {
    let policy: RetryPolicy

    /// What to do with the failure `error` of attempt `attempt` (0: the cache answered).
    /// - Parameters:
    ///   - chunksDelivered: Whether streamed chunks of the response were handed over.
    ///   - bodyReplayable: Whether another attempt can send the request's body.
    ///   - secondsLeft: Seconds until the request's deadline, nil for none.
    func decide(
        _ error: TernError, attempt: Int, method: HTTPMethod, url: URL?, chunksDelivered: Bool, bodyReplayable: Bool = true,
        secondsLeft: @autoclosure () -> TimeInterval?
    ) -> RetryDecision {
        guard attempt > 0, policy.maxAttempts > 1 || policy.decide != nil, !chunksDelivered, bodyReplayable else { return .deliver }
        switch policy.decision(for: RetryContext(method: method, url: url, attempt: attempt, error: error)) {
        case .deliver: return .deliver
        case .retry(let delay):
            if let left = secondsLeft(), delay >= left { return .deliver }
            return .retry(after: delay)
        }
    }

    /// `result`, saying how many attempts it took when it failed after more than one (redirects
    /// aside).
    static func counted<Value>(
        _ result: Result<Response<Value>, TernError>, route: CallStateMachine.Route
    ) -> Result<Response<Value>, TernError> {
        let attempts = route.attempt - route.redirects.count
        guard case .failure(let error) = result, attempts > 1, !error.isCancelled else { return result }
        return .failure(.failedAfterRetries(attempts: attempts, last: error))
    }
}
