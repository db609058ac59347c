import Foundation

/// How body parameters are sent (`post`, `RequestBody.parameters`, `ClientConfiguration.bodyEncoding`).
/// Thread safety: a value type, safe to share.
public enum BodyEncoding: Sendable, Equatable {
    /// `application/x-www-form-urlencoded` (AFNetworking's default).
    case form
    /// `application/json`.
    case json
}

/// One-line calls that return untyped JSON, as an AFNetworking-style `NetworkManager` and
/// `HIHTTPRequestManager` offer them. `get` uses the client's `oneLineGetStrategy` when set:
/// `Client.shared` sets `.cancelOlder` (as an AFNetworking-style `NetworkManager` does), so a new GET of the
/// same URL cancels the one in flight; an app's own client opts in the same way.
extension Client {
    /// GETs a URL with query parameters; `completion` gets parsed JSON or an error on the main
    /// queue (the client's callback queue) — an AFNetworking-style `GET:parameters:completion:`.
    /// - Parameters:
    ///   - url: Absolute URL, or a path relative to the base URL.
    ///   - parameters: Query parameters (see `ParameterEncoding`).
    ///   - headers: Extra headers.
    ///   - completion: Called exactly once.
    /// - Returns: A handle that can cancel the request.
    @discardableResult
    public func get(
        _ url: String,
        parameters: Parameters = [:],
        headers: [String: String] = [:],
        completion: @escaping @Sendable (Result<Response<JSON>, TernError>) -> Void
    ) -> RequestHandle {
        send(getRequest(url, parameters, headers), completion: completion)
    }

    /// POSTs parameters as a form or JSON body; `completion` gets parsed JSON or an error.
    /// - Parameters:
    ///   - url: Absolute URL, or a path relative to the base URL.
    ///   - parameters: Body parameters.
    ///   - encoding: `.form` or `.json`; nil (the default) uses the client's `bodyEncoding`.
    ///   - headers: Extra headers.
    ///   - completion: Called exactly once.
    /// - Returns: A handle that can cancel the request.
    @discardableResult
    public func post(
        _ url: String,
        parameters: Parameters = [:],
        encoding: BodyEncoding? = nil,
        headers: [String: String] = [:],
        completion: @escaping @Sendable (Result<Response<JSON>, TernError>) -> Void
    ) -> RequestHandle {
        send(Request<JSON>(url, method: .post, body: Self.body(parameters, encoding), headers: headers), completion: completion)
    }

    /// GETs a URL with query parameters, with separate success and failure closures
    /// (an AFNetworking-style `GETWithRequestTag:URLString:parameters:success:failure:`).
    /// - Parameters:
    ///   - url: Absolute URL, or a path relative to the base URL.
    ///   - parameters: Query parameters (see `ParameterEncoding`).
    ///   - success: Receives the parsed JSON.
    ///   - failure: Receives the error.
    /// - Returns: A handle that can cancel the request.
    @discardableResult
    public func get(
        _ url: String,
        parameters: Parameters = [:],
        success: @escaping @Sendable (JSON) -> Void,
        failure: @escaping @Sendable (TernError) -> Void
    ) -> RequestHandle {
        send(getRequest(url, parameters, [:]), success: success, failure: failure)
    }

    /// POSTs parameters as a form or JSON body, with separate success and failure closures.
    /// - Parameters:
    ///   - url: Absolute URL, or a path relative to the base URL.
    ///   - parameters: Body parameters.
    ///   - encoding: `.form` or `.json`; nil (the default) uses the client's `bodyEncoding`.
    ///   - success: Receives the parsed JSON.
    ///   - failure: Receives the error.
    /// - Returns: A handle that can cancel the request.
    @discardableResult
    public func post(
        _ url: String,
        parameters: Parameters = [:],
        encoding: BodyEncoding? = nil,
        success: @escaping @Sendable (JSON) -> Void,
        failure: @escaping @Sendable (TernError) -> Void
    ) -> RequestHandle {
        send(Request<JSON>(url, method: .post, body: Self.body(parameters, encoding)), success: success, failure: failure)
    }

    /// GETs a URL with query parameters and returns the parsed JSON.
    /// - Throws: `TernError`.
    public func get(_ url: String, parameters: Parameters = [:], headers: [String: String] = [:]) async throws(TernError) -> Response<JSON>
    {
        try await send(getRequest(url, parameters, headers))
    }

    /// POSTs parameters as a form or JSON body (`encoding`, else the client's `bodyEncoding`) and
    /// returns the parsed JSON.
    /// - Throws: `TernError`.
    public func post(
        _ url: String, parameters: Parameters = [:], encoding: BodyEncoding? = nil,
        headers: [String: String] = [:]
    ) async throws(TernError) -> Response<JSON> {
        try await send(Request<JSON>(url, method: .post, body: Self.body(parameters, encoding), headers: headers))
    }

    private func getRequest(_ url: String, _ parameters: Parameters, _ headers: [String: String]) -> Request<JSON> {
        var request = Request<JSON>(url, query: parameters, headers: headers)
        request.repeatStrategy = configuration.oneLineGetStrategy
        return request
    }

    /// The parameters in `encoding`, or in the client's (or group's) `bodyEncoding` when nil.
    private static func body(_ parameters: Parameters, _ encoding: BodyEncoding?) -> RequestBody {
        .parameters(parameters, encoding: encoding)
    }
}
