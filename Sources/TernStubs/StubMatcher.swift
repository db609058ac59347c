import Foundation
import Tern

/// Which requests a stub answers: method, host, path (exact or pattern), query and body.
///
/// Build one with `.get("/v1/weather")`, `.post(…)`, `.any(…)` and narrow it with `query(_:)`,
/// `host(_:)` and `body(_:)`. Every condition that is set must hold.
/// Thread safety: a value type, safe to share.
public struct StubMatcher: Sendable, CustomStringConvertible {
    /// The method to match; nil matches any.
    public var method: HTTPMethod?
    /// The host to match (case-insensitive); nil matches any.
    public var host: String?
    /// The path to match; nil matches any.
    public var path: PathPattern?
    /// Query pairs that must be present with these values (others may be present too).
    public var query: [String: String]
    /// A condition on the body; nil matches any body.
    public var body: BodyCondition?

    /// Creates a matcher; the defaults match every request.
    public init(
        method: HTTPMethod? = nil, host: String? = nil, path: PathPattern? = nil,
        query: [String: String] = [:], body: BodyCondition? = nil
    ) {
        self.method = method
        self.host = host
        self.path = path
        self.query = query
        self.body = body
    }

    /// GET requests to `path` (a `PathPattern` string: exact, or with `*` / `**`).
    public static func get(_ path: String) -> StubMatcher { StubMatcher(method: .get, path: PathPattern(path)) }
    /// POST requests to `path`.
    public static func post(_ path: String) -> StubMatcher { StubMatcher(method: .post, path: PathPattern(path)) }
    /// Requests with any method to `path`.
    public static func any(_ path: String) -> StubMatcher { StubMatcher(path: PathPattern(path)) }
    /// Every request.
    public static let everything = StubMatcher()

    /// A copy that also requires these query pairs.
    public func query(_ pairs: [String: String]) -> StubMatcher {
        var copy = self
        copy.query.merge(pairs) { $1 }
        return copy
    }

    /// A copy that also requires this host.
    public func host(_ host: String) -> StubMatcher {
        var copy = self
        copy.host = host
        return copy
    }

    /// A copy that also requires this body condition.
    public func body(_ condition: BodyCondition) -> StubMatcher {
        var copy = self
        copy.body = condition
        return copy
    }

    func matches(_ request: URLRequest) -> Bool {
        guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return false }
        if let method, method.rawValue != (request.httpMethod ?? "GET") { return false }
        if let host, host.lowercased() != url.host?.lowercased() { return false }
        if let path, !path.matches(components.path) { return false }
        let items = components.queryItems ?? []
        for (name, value) in query where !items.contains(where: { $0.name == name && $0.value == value }) { return false }
        if let body, !body.matches(request.httpBody ?? Data()) { return false }
        return true
    }

    /// `GET /v1/weather?city=… (host, body condition)`.
    public var description: String {
        var text = "\(method?.rawValue ?? "ANY") \(path?.description ?? "*")"
        if !query.isEmpty { text += "?" + query.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&") }
        if let host { text += " on \(host)" }
        if body != nil { text += " with a body condition" }
        return text
    }
}

/// A path to match: exact, or a pattern where `*` stands for one path segment (or part of one)
/// and `**` for any number of segments: `/v1/cities/*/weather`, `/static/**`.
/// Thread safety: a value type, safe to share.
public struct PathPattern: Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    private let pattern: String
    private let expression: String?

    /// A pattern from its text; text without `*` matches exactly.
    public init(_ pattern: String) {
        self.pattern = pattern
        guard pattern.contains("*") else {
            expression = nil
            return
        }
        var regex = "^"
        var characters = Array(pattern)[...]
        while let character = characters.popFirst() {
            if character == "*" {
                if characters.first == "*" {
                    characters.removeFirst()
                    regex += ".*"
                } else {
                    regex += "[^/]*"
                }
            } else {
                regex += NSRegularExpression.escapedPattern(for: String(character))
            }
        }
        expression = regex + "$"
    }

    /// A pattern from a string literal.
    public init(stringLiteral value: String) { self.init(value) }

    func matches(_ path: String) -> Bool {
        guard let expression else { return path == pattern }
        return path.range(of: expression, options: .regularExpression) != nil
    }

    /// The pattern's text.
    public var description: String { pattern }
}

/// A condition on a request body.
/// Thread safety: a value type, safe to share.
public struct BodyCondition: Sendable {
    let matches: @Sendable (Data) -> Bool

    /// The body equals `data` exactly.
    public static func equals(_ data: Data) -> BodyCondition { BodyCondition { $0 == data } }
    /// The body, as UTF-8 text, contains `text`.
    public static func contains(_ text: String) -> BodyCondition {
        BodyCondition { String(decoding: $0, as: UTF8.self).contains(text) }
    }
    /// The body is a JSON object holding these members (others may be present too).
    public static func json(containing members: [String: JSON]) -> BodyCondition {
        BodyCondition { data in
            guard let object = (try? JSON(data: data))?.object else { return false }
            return members.allSatisfy { object[$0.key] == $0.value }
        }
    }
    /// Any condition of your own.
    public static func custom(_ predicate: @escaping @Sendable (Data) -> Bool) -> BodyCondition { BodyCondition(matches: predicate) }
}
