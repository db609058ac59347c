import Foundation

/// How Tern follows redirects: itself, the same on every platform and transport.
///
/// A 301, 302, 303, 307 or 308 response with a `Location` is followed as a new attempt, up to
/// `limit` times (more is `TernError.redirectFailed(.tooMany)`). 303 turns any method but HEAD
/// into a GET without a body, 301 and 302 turn a POST into one (as browsers do); 307 and 308
/// resend the method and the body (URLSession on Linux would send an empty body). A redirect to
/// another origin (scheme, host or port) drops `Authorization`, `Cookie`, `Proxy-Authorization`
/// and `sensitiveHeaders`; an https → http redirect is refused unless allowed. Other 3xx
/// responses, and redirects without a `Location`, are delivered as they are.
/// Thread safety: a value type, safe to share.
public struct RedirectPolicy: Sendable, Equatable {
    /// Whether redirects are followed at all. Default true.
    public var follows: Bool
    /// How many redirects one request may follow. Default 10.
    public var limit: Int
    /// Whether an https → http redirect is followed. Default false: it fails with
    /// `TernError.redirectFailed(.insecureDowngrade)`.
    public var allowsInsecureDowngrade: Bool
    /// Headers dropped on a redirect to another origin, besides `Authorization`, `Cookie` and
    /// `Proxy-Authorization` (compared case-insensitively). Default empty.
    public var sensitiveHeaders: Set<String>

    /// Creates a policy; every parameter defaults to the documented default.
    public init(follows: Bool = true, limit: Int = 10, allowsInsecureDowngrade: Bool = false, sensitiveHeaders: Set<String> = []) {
        self.follows = follows
        self.limit = limit
        self.allowsInsecureDowngrade = allowsInsecureDowngrade
        self.sensitiveHeaders = sensitiveHeaders
    }

    /// Follow up to 10 redirects, no downgrade, credentials stay with their origin.
    public static let `default` = RedirectPolicy()
    /// Never follow: a 3xx response is delivered as it is (and fails the default status validation).
    public static let never = RedirectPolicy(follows: false)

    /// Headers that never cross to another origin.
    static let credentialHeaders: Set<String> = ["authorization", "cookie", "proxy-authorization"]
}

/// One redirect a request followed.
/// Thread safety: a value type, safe to share.
public struct Redirect: Sendable, Hashable, CustomStringConvertible {
    /// The redirect's status code (301, 302, 303, 307 or 308).
    public let statusCode: Int
    /// The URL that answered with the redirect.
    public let from: URL
    /// The URL it pointed to, resolved against `from`.
    public let to: URL

    /// Creates a record of one redirect.
    public init(statusCode: Int, from: URL, to: URL) {
        self.statusCode = statusCode
        self.from = from
        self.to = to
    }

    /// `302 https://a/x → https://b/y`.
    public var description: String { "\(statusCode) \(from.absoluteString) → \(to.absoluteString)" }
}
