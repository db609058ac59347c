import Foundation

/// Preprocesses the result a request is about to deliver, off the main thread — YBNetwork's
/// `preprocessSuccessInChildThread` and `preprocessFailureInChildThread`. A preprocessor may
/// replace the decoded value, turn a success into a failure (by throwing), or replace the error.
///
/// Runs once per request, on its final result (not on attempts that were retried or restarted,
/// nor on a cache-then-network request's cached response), the client's first, then the
/// group's, then the request's. Both methods have defaults that change nothing.
/// Thread safety: called on a background thread; must be `Sendable`.
public protocol ResponsePreprocessor: Hook {
    /// The value to deliver instead of `value` (cast it to the types you handle: `value as? JSON`).
    /// - Throws: Any error; the request then fails with it (`TernError`) or with
    ///   `TernError.rejected(by: name, error:)`, and the response is not stored in the cache.
    func preprocessSuccess<Value: Sendable>(_ value: Value, of response: ResponseContext) throws -> Value
    /// The error to deliver instead of `error`; `response` is nil when none arrived.
    func preprocessFailure(_ error: TernError, of response: ResponseContext?) -> TernError
}

extension ResponsePreprocessor {
    /// Keeps the value.
    public func preprocessSuccess<Value: Sendable>(_ value: Value, of response: ResponseContext) throws -> Value { value }
    /// Keeps the error.
    public func preprocessFailure(_ error: TernError, of response: ResponseContext?) -> TernError { error }
}

/// Preprocesses the result a request is about to deliver, on the main thread, after every
/// `ResponsePreprocessor` — YBNetwork's `preprocessSuccessInMainThread` and
/// `preprocessFailureInMainThread`: the place to update UI-bound state (show the login screen on
/// an expired session) before the request's own callback runs. Same rules as
/// `ResponsePreprocessor`.
/// Thread safety: called on the main thread.
public protocol MainThreadResponsePreprocessor: Hook {
    /// The value to deliver instead of `value`.
    /// - Throws: Any error; the request then fails with it.
    @MainActor func preprocessSuccess<Value: Sendable>(_ value: Value, of response: ResponseContext) throws -> Value
    /// The error to deliver instead of `error`.
    @MainActor func preprocessFailure(_ error: TernError, of response: ResponseContext?) -> TernError
}

extension MainThreadResponsePreprocessor {
    /// Keeps the value.
    @MainActor public func preprocessSuccess<Value: Sendable>(_ value: Value, of response: ResponseContext) throws -> Value { value }
    /// Keeps the error.
    @MainActor public func preprocessFailure(_ error: TernError, of response: ResponseContext?) -> TernError { error }
}

/// A failure preprocessor made of a closure (`Hooks.preprocessFailure(_:_:)`).
struct FailureClosure: ResponsePreprocessor {
    let name: String
    let replace: @Sendable (TernError, ResponseContext?) -> TernError

    func preprocessFailure(_ error: TernError, of response: ResponseContext?) -> TernError { replace(error, response) }
}

/// The same, run on the main thread (`Hooks.preprocessFailureOnMainThread(_:_:)`).
struct MainThreadFailureClosure: MainThreadResponsePreprocessor {
    let name: String
    let replace: @MainActor @Sendable (TernError, ResponseContext?) -> TernError

    @MainActor func preprocessFailure(_ error: TernError, of response: ResponseContext?) -> TernError { replace(error, response) }
}
