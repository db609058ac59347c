import Foundation

/// What the decide stage knows about a processed attempt.
struct AttemptReport: Sendable {
    /// The attempt's number (0: the cache answered).
    let attempt: Int
    /// Whether it processed into a response, or the error it became.
    let result: Result<Void, TernError>
}

/// What the decide stage does with a processed attempt.
enum AttemptDecision: Sendable, Equatable {
    /// Store (when the policy allows) and deliver the result.
    case deliver
    /// Drop the result, wait `after` seconds (cancellable, under the request's deadline), and make
    /// another attempt with the same request.
    case retry(after: TimeInterval)
}
