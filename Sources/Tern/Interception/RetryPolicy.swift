import Foundation

/// When and how often a failed request is tried again.
///
/// An attempt is retried when its method may be repeated (idempotent methods by default), its
/// failure is retryable (a status in `retryableStatusCodes`, a transport error in
/// `retryableErrors`, or one attempt's own timeout) and fewer than `maxAttempts` attempts were
/// made. The wait is the server's `Retry-After` (seconds or an HTTP date) when it sends one, else
/// exponential backoff `baseDelay × 2^(n−1)`, capped at `maxDelay`, then ± `jitter` (never past
/// `maxDelay`). A
/// `Retry-After` longer than `maxDelay`, or any wait that would outlast the request's deadline,
/// is not waited for: the failure in hand is delivered at once (inside `.failedAfterRetries`
/// after more than one attempt), with the server's headers. The request's deadline covers every
/// attempt and every wait; cancelling during a wait ends the request at once. `decide`, when set, is asked first and may retry, deliver, or leave the
/// decision to the rules. With `servesStaleOnError`, a cached entry answers a 5xx or a transport
/// error before any retry.
/// ```swift
/// let api = Client(baseURL: "https://api.example.com") { $0.retryPolicy = .exponential(maxAttempts: 4) }
/// ```
/// Thread safety: a value type, safe to share.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included; 1 never retries. Default 3.
    public var maxAttempts: Int
    /// The first backoff delay in seconds. Default 0.2.
    public var baseDelay: TimeInterval
    /// The longest wait in seconds: backoff is capped at it, and a longer `Retry-After` ends the
    /// request with the server's answer instead of a wait. Default 30.
    public var maxDelay: TimeInterval
    /// The backoff's random spread as a fraction of the delay (0.2: ±20 %). Default 0.2.
    public var jitter: Double
    /// Methods that may be sent again: the idempotent ones by default (not POST or PATCH).
    public var retryableMethods: Set<HTTPMethod>
    /// Status codes worth another try. Default 408, 429, 500, 502, 503, 504.
    public var retryableStatusCodes: Set<Int>
    /// Transport errors worth another try. Default: connection lost, timed out, DNS and
    /// connection failures, not connected.
    public var retryableErrors: Set<URLError.Code>
    /// A limit in seconds on each attempt, however lively: an attempt that runs out of it fails
    /// with `.timedOut` and is tried again (a timeout is retryable by default). The idle
    /// `timeout` applies within it, and a `deadline` over all attempts. Default nil: none.
    public var attemptTimeout: TimeInterval?
    /// Asked first after every failed attempt: `.retry(after:)`, `.deliver`, or nil for the rules
    /// above. Default nil.
    public var decide: (@Sendable (RetryContext) -> RetryDecision?)?

    /// Creates a policy; every parameter defaults to the documented default.
    public init(
        maxAttempts: Int = 3, baseDelay: TimeInterval = 0.2, maxDelay: TimeInterval = 30, jitter: Double = 0.2,
        retryableMethods: Set<HTTPMethod> = [.get, .head, .put, .delete, .options],
        retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504],
        retryableErrors: Set<URLError.Code> = [
            .networkConnectionLost, .timedOut, .cannotFindHost, .cannotConnectToHost,
            .dnsLookupFailed, .notConnectedToInternet,
        ],
        attemptTimeout: TimeInterval? = nil, decide: (@Sendable (RetryContext) -> RetryDecision?)? = nil
    ) {
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.jitter = jitter
        self.retryableMethods = retryableMethods
        self.retryableStatusCodes = retryableStatusCodes
        self.retryableErrors = retryableErrors
        self.attemptTimeout = attemptTimeout
        self.decide = decide
    }

    /// Never retry: the default of a client.
    public static let none = RetryPolicy(maxAttempts: 1)

    /// Exponential backoff with jitter, up to `maxAttempts` attempts in all.
    public static func exponential(maxAttempts: Int = 3, baseDelay: TimeInterval = 0.2, maxDelay: TimeInterval = 30) -> RetryPolicy {
        RetryPolicy(maxAttempts: maxAttempts, baseDelay: baseDelay, maxDelay: maxDelay)
    }

    /// The same policy, also for POST and PATCH (only when the server makes them safe to repeat,
    /// e.g. with an idempotency key).
    public func retryingAllMethods() -> RetryPolicy {
        var copy = self
        copy.retryableMethods.formUnion([.post, .patch])
        return copy
    }
}

/// What a retry decision knows about a failed attempt.
/// Thread safety: a value type, safe to share.
public struct RetryContext: Sendable {
    /// The request's method.
    public let method: HTTPMethod
    /// The URL of the failed attempt.
    public let url: URL?
    /// The failed attempt's number (1 for the first).
    public let attempt: Int
    /// How the attempt failed.
    public let error: TernError
}

/// What to do after a failed attempt.
/// Thread safety: a value type, safe to share.
public enum RetryDecision: Sendable, Equatable {
    /// Deliver the failure.
    case deliver
    /// Wait this many seconds (within the request's deadline), then try again.
    case retry(after: TimeInterval)
}

extension RetryPolicy {
    /// The decision for a failed attempt under this policy.
    func decision(for context: RetryContext) -> RetryDecision {
        if let custom = decide?(context) { return custom }
        guard context.attempt < maxAttempts, retryableMethods.contains(context.method), isRetryable(context.error) else {
            return .deliver
        }
        if let seconds = Self.retryAfter(context.error) {
            // The server asks for a longer wait than the policy allows: its answer now, not a
            // retry before the time it gave.
            guard seconds <= maxDelay else { return .deliver }
            return .retry(after: max(0, seconds))
        }
        return .retry(after: Backoff(base: baseDelay, maximum: maxDelay, jitter: jitter).delay(attempt: context.attempt))
    }

    private func isRetryable(_ error: TernError) -> Bool {
        switch error {
        case .unacceptableStatus(let code, _, _, _): retryableStatusCodes.contains(code)
        case .transport(let underlying): retryableErrors.contains(underlying.code)
        // Only an attempt's own timeout reaches this stage: the request's deadline ends it.
        case .timedOut: retryableErrors.contains(.timedOut)
        default: false
        }
    }

    /// The `Retry-After` of a failed response in seconds from now: delta-seconds or an HTTP date.
    static func retryAfter(_ error: TernError, now: Date = Date()) -> TimeInterval? {
        guard let value = error.responseHeader("Retry-After")?.trimmingCharacters(in: .whitespaces) else { return nil }
        if let seconds = TimeInterval(value) { return seconds }
        return HTTPDate.parse(value).map { $0.timeIntervalSince(now) }
    }
}
