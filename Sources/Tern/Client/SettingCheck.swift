import Foundation

/// The checks that catch a configuration mistake where it is made: a client's settings when the
/// client is created (`Client.configurationError`, which every request then fails with), a
/// request's own when it is sent (`.invalidRequest(.invalidValue)`).
enum SettingCheck {
    /// Why `seconds` cannot be a timeout, nil when it can: finite and more than 0, or
    /// `.infinity`, which means none. 0, a negative value and NaN are mistakes.
    static func timeoutProblem(_ seconds: TimeInterval) -> String? {
        if seconds == .infinity || (seconds.isFinite && seconds > 0) { return nil }
        return "must be more than 0 seconds, or .infinity for none (got \(seconds))"
    }

    /// Why `limit` cannot be a size limit, nil when it can: 0 or more. A client's nil means no
    /// limit; a request's means its client's, and `Int.max` lifts it.
    static func sizeLimitProblem(_ limit: Int?, ofRequest: Bool = false) -> String? {
        guard let limit, limit < 0 else { return nil }
        let none = ofRequest ? "Int.max for no limit, nil for the client's" : "nil for no limit"
        return "must be 0 or more bytes, or \(none) (got \(limit))"
    }

    /// The first mistake in a client's configuration, as `TernError.unsupportedConfiguration`'s text.
    static func problem(in configuration: ClientConfiguration) -> String? {
        if let problem = timeoutProblem(configuration.timeout) { return "timeout \(problem)" }
        if let deadline = configuration.deadline, let problem = timeoutProblem(deadline) { return "deadline \(problem)" }
        if let perAttempt = configuration.retryPolicy.attemptTimeout, let problem = timeoutProblem(perAttempt) {
            return "retryPolicy.attemptTimeout \(problem)"
        }
        if let problem = sizeLimitProblem(configuration.maximumResponseSize) { return "maximumResponseSize \(problem)" }
        if let problem = configuration.cacheStorage.problem { return problem }
        if let base = configuration.baseURL, let problem = baseURLProblem(base) { return problem }
        return nil
    }

    /// Why `base` cannot be a client's base URL, nil when it can (or is empty: no base URL): it
    /// must be an absolute http(s) URL with a host and a port in 1–65535, as any request URL.
    static func baseURLProblem(_ base: String) -> String? {
        guard !base.trimmingOuterWhitespace().isEmpty else { return nil }
        do {
            _ = try URLBuilder.makeURL("", baseURL: base, parameters: [:], encoding: .default)
            return nil
        } catch {
            guard case .invalidRequest(let reason) = error else { return "baseURL \"\(base)\" cannot be used: \(error)" }
            switch reason {
            case .invalidValue(_, let why): return "baseURL \"\(base)\" has an unusable port: \(why)"
            default: return "baseURL \"\(base)\" cannot be used: \(reason)"
            }
        }
    }

    /// A request's own settings, and the group's timeout and deadline it inherits:
    /// `.invalidRequest` for the first mistake.
    static func check<Value>(_ request: Request<Value>, timeout: TimeInterval, deadline: TimeInterval) throws(TernError) {
        if let problem = timeoutProblem(timeout) { throw .invalidRequest(.invalidValue(name: "timeout", reason: problem)) }
        if let problem = timeoutProblem(deadline) { throw .invalidRequest(.invalidValue(name: "deadline", reason: problem)) }
        if let problem = sizeLimitProblem(request.maximumResponseSize, ofRequest: true) {
            throw .invalidRequest(.invalidValue(name: "maximumResponseSize", reason: problem))
        }
        if let perAttempt = request.retryPolicy?.attemptTimeout, let problem = timeoutProblem(perAttempt) {
            throw .invalidRequest(.invalidValue(name: "retryPolicy.attemptTimeout", reason: problem))
        }
    }

    /// Why the port of `url` cannot be connected to, nil when it can (or the URL has none).
    static func portProblem(_ url: URL) -> String? {
        guard let port = url.port, !(1...65535).contains(port) else { return nil }
        return "\(port) is outside 1–65535"
    }
}
