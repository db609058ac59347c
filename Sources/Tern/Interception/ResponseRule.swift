import Foundation

/// Decides, after each network response and before it is validated and decoded, whether the
/// request goes on, fails, or stops and restarts later — YBNetwork's "redirection" of a
/// response. The common rule: an HTTP 200 whose body says `{"code": 1001, "message": "token
/// expired"}` becomes `TernError.business(code:message:body:)` (see `BusinessRule`).
///
/// Rules run off the transport's thread, the client's first, then the group's, then the
/// request's; the first that does not answer `.proceed` decides. A cached response is not shown
/// to rules: it passed them when it was stored.
/// Thread safety: called on a background thread; must be `Sendable`.
public protocol ResponseRule: Hook {
    /// What to do with `response`.
    func decide(_ response: ResponseContext) -> ResponseDecision
}

/// What a `ResponseRule` makes of a response.
/// Thread safety: a value type, safe to share.
public enum ResponseDecision: Sendable {
    /// Go on as usual: validate, decode, retry or deliver.
    case proceed
    /// Deliver as a success whatever the status code and content type: skip validation, decode
    /// the body (e.g. an API that answers a known 404 with a body worth showing).
    case succeed
    /// Deliver this failure instead (a business error, say); the retry policy is not asked.
    case fail(TernError)
    /// Stop here and send the request again when `gate` restarts its requests, or fail when it
    /// drops them (e.g. hold every request that hit "login required" until the user logged in).
    /// The request keeps its handle and can be cancelled meanwhile; its deadline is suspended
    /// while it waits and starts afresh when it is sent again.
    case restart(after: RestartGate)
}

/// One response as hooks see it: the request that was sent, the response head and body, the
/// attempt. For preprocessors of a failure that never reached the server, `response` is nil.
/// Thread safety: immutable, safe to share.
public struct ResponseContext: Sendable {
    /// The request as sent for this attempt (adapted, after redirects).
    public let request: URLRequest
    /// The response head.
    public let response: HTTPURLResponse?
    /// The response body.
    public let body: Data
    /// The attempt's number (1 for the first).
    public let attempt: Int
    /// The request's tags.
    public let tags: Set<String>
    /// When the request was sent (`DispatchTime` uptime nanoseconds), for `Authentication`.
    let requestStarted: UInt64
    private let parsed: ParsedBody

    init(request: URLRequest, response: HTTPURLResponse?, body: Data, attempt: Int, tags: Set<String>, requestStarted: UInt64) {
        self.requestStarted = requestStarted
        self.request = request
        self.response = response
        self.body = body
        self.attempt = attempt
        self.tags = tags
        self.parsed = ParsedBody(body)
    }

    /// The HTTP status code, or 0 without a response.
    public var statusCode: Int { response?.statusCode ?? 0 }

    /// The body as JSON, parsed once on first use and shared by every hook of this response;
    /// nil when it is not JSON.
    public var json: JSON? { parsed.json }
}

/// The body of one response, parsed as JSON at most once however many hooks ask.
private final class ParsedBody: Sendable {
    private let body: Data
    private let cached = Locked<JSON??>(nil)

    init(_ body: Data) { self.body = body }

    var json: JSON? {
        if let json = cached.withLock({ $0 }) { return json }
        let json = try? JSON(data: body)
        cached.withLock { $0 = json }
        return json
    }
}

/// The usual business-error rule for JSON APIs that wrap every answer in an envelope such as
/// `{"code": 0, "message": "ok", "data": …}`: any other code fails the request with
/// `TernError.business(code:message:body:)`, and codes you name can hold the request at a
/// `RestartGate` instead (e.g. "login required").
/// ```swift
/// let login = RestartGate()
/// api.configuration.hooks.rules.append(BusinessRule(holding: [1001: login]))
/// ```
/// Bodies that are not JSON objects with an integer code are let through untouched.
/// Thread safety: immutable, safe to share.
public struct BusinessRule: ResponseRule {
    /// The key of the code in the envelope. Default `"code"`.
    public var codeKey: String
    /// The key of the message. Default `"message"` (`"msg"` is tried too).
    public var messageKey: String
    /// The codes that mean success. Default `[0]`.
    public var successCodes: Set<Int>
    /// Codes that stop the request at a gate instead of failing it.
    public var holding: [Int: RestartGate]

    /// Creates the rule.
    public init(
        codeKey: String = "code", messageKey: String = "message", successCodes: Set<Int> = [0],
        holding: [Int: RestartGate] = [:]
    ) {
        self.codeKey = codeKey
        self.messageKey = messageKey
        self.successCodes = successCodes
        self.holding = holding
    }

    /// `"BusinessRule"`.
    public var name: String { "BusinessRule" }

    /// Fails or holds a response whose envelope code is not a success code.
    public func decide(_ response: ResponseContext) -> ResponseDecision {
        guard case .object(let object)? = response.json, let code = object[codeKey]?.int, !successCodes.contains(code) else {
            return .proceed
        }
        if let gate = holding[code] { return .restart(after: gate) }
        let message = object[messageKey]?.string ?? object["msg"]?.string ?? ""
        return .fail(.business(code: code, message: message, body: response.body))
    }
}
