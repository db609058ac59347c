import Foundation

/// What every hook has: a name, used in `TernError.rejected(by:error:)` and in logs.
public protocol Hook: Sendable {
    /// The hook's name; its type name by default.
    var name: String { get }
}

extension Hook {
    /// The hook's type name.
    public var name: String { String(describing: Self.self) }
}

/// Rewrites a request's parameters once, before its URL and body are built: add a device ID or a
/// user ID to every request of a team, or sign the final parameters.
/// Thread safety: called on the thread that calls `send`; must be `Sendable`.
public protocol ParameterRewriter: Hook {
    /// Changes `parameters` in place.
    /// - Throws: Any error; the request then fails with `TernError.rejected(by: name, error:)`
    ///   (a `TernError` is delivered as it is), and nothing is sent.
    func rewrite(_ parameters: inout RequestParameters) throws
}

/// Rewrites a request's URL once, after it was built with its query.
/// Thread safety: called on the thread that calls `send`; must be `Sendable`.
public protocol URLRewriter: Hook {
    /// The URL to use instead of `url`.
    /// - Throws: Any error; the request then fails as for `ParameterRewriter`.
    func rewrite(_ url: URL) throws -> URL
}

/// Adapts the `URLRequest` of each attempt just before it is sent (a fresh header, a token),
/// asynchronously. Runs for the first attempt and every retry or restart, each time on the
/// request as prepared (before any adapter), but not for a followed redirect, which keeps the
/// adapted headers its redirect policy allows.
/// Thread safety: called from a Swift `Task`; must be `Sendable`.
public protocol RequestAdapter: Hook {
    /// The request to send for this attempt.
    /// - Throws: Any error; the request then fails with `TernError.rejected(by: name, error:)`
    ///   (a `TernError` is delivered as it is).
    func adapt(_ request: URLRequest, for attempt: AttemptInfo) async throws -> URLRequest
}

/// A request's parameters as hooks see and change them: the query, and the body when it is made
/// of parameters (`.form`, `.json(_:)` of a dictionary, `.parameters`).
/// Thread safety: a value type, safe to share.
public struct RequestParameters: Sendable {
    /// The query parameters (besides any query written in the URL string).
    public var query: Parameters
    /// The body parameters; nil when the body is not made of parameters (raw data, an
    /// `Encodable`) or there is none. Setting a dictionary on a request without a body gives it
    /// one in the client's `bodyEncoding`.
    public var body: Parameters?
    /// The request's method.
    public let method: HTTPMethod
    /// The URL string or path the request was made with (before the base URL).
    public let path: String
    /// The request's tags.
    public let tags: Set<String>

    /// Every parameter, query and body together (a body value wins over a query value of the
    /// same name): what a signature is usually computed over.
    public var all: Parameters { query.merging(body ?? [:]) { _, body in body } }
}

/// What an adapter knows about the attempt it adapts.
/// Thread safety: a value type, safe to share.
public struct AttemptInfo: Sendable {
    /// The attempt's number: 1 for the first, higher after a retry or a restart.
    public let number: Int
    /// The request's tags.
    public let tags: Set<String>
}

/// A hook made of a closure (`Hooks.rewriteParameters(_:_:)` and the like).
struct ClosureHook<Body: Sendable>: Sendable {
    let name: String
    let body: Body
}

extension ClosureHook: Hook {}

extension ClosureHook: ParameterRewriter where Body == @Sendable (inout RequestParameters) throws -> Void {
    func rewrite(_ parameters: inout RequestParameters) throws { try body(&parameters) }
}

extension ClosureHook: URLRewriter where Body == @Sendable (URL) throws -> URL {
    func rewrite(_ url: URL) throws -> URL { try body(url) }
}

extension ClosureHook: RequestAdapter where Body == @Sendable (URLRequest, AttemptInfo) async throws -> URLRequest {
    func adapt(_ request: URLRequest, for attempt: AttemptInfo) async throws -> URLRequest { try await body(request, attempt) }
}

extension ClosureHook: ResponseRule where Body == @Sendable (ResponseContext) -> ResponseDecision {
    func decide(_ response: ResponseContext) -> ResponseDecision { body(response) }
}

extension TernError {
    /// `error` thrown by the hook `hook`, as the request's failure: a `TernError` as it is, any
    /// other error as `.rejected(by:error:)`.
    static func fromHook(_ hook: any Hook, _ error: any Error) -> TernError {
        error as? TernError ?? .rejected(by: hook.name, error: error)
    }
}
