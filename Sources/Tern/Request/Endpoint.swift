import Foundation

/// Anything `Client.send` accepts: a `Request`, an `Endpoint` definition, or your own type that
/// knows how to become a request.
/// Thread safety: conforming types must be `Sendable`.
public protocol RequestConvertible<Value>: Sendable {
    /// The type the response decodes to.
    associatedtype Value: Sendable
    /// The request to send; called once per `send`.
    func makeRequest() -> Request<Value>
}

extension Request: RequestConvertible {
    /// The request itself.
    public func makeRequest() -> Request<Value> { self }
}

/// One endpoint of an API, described once: its group, path, method, parameters, response type and
/// strategies — the Swift form of YBNetwork's one request subclass per endpoint. Only `group` and
/// `path` are required; everything else has a default that defers to the group and the client.
/// ```swift
/// struct CitySearch: Endpoint {
///     typealias Value = [City]
///     let text: String
///     var group: APIGroup { WeatherAPI.group }
///     var path: String { "search" }
///     var parameters: Parameters { ["q": text] }
///     var repeatStrategy: RepeatStrategy? { .cancelOlder }
/// }
/// let cities = try await client.send(CitySearch(text: "bei")).value
/// ```
/// Send a definition like a request, in every callback style; `makeRequest()` gives the request
/// to adjust further (a lifetime owner, a progress handler).
/// Thread safety: conforming types must be `Sendable`.
public protocol Endpoint: RequestConvertible {
    /// The API group whose base URL, headers, encodings and hooks apply.
    var group: APIGroup { get }
    /// The path, relative to the group's (else the client's) base URL, or an absolute URL.
    var path: String { get }
    /// The method; `.get` by default.
    var method: HTTPMethod { get }
    /// The parameters; empty by default. Where they go is `parameterDestination`'s choice.
    var parameters: Parameters { get }
    /// Where `parameters` go; `.automatic` by default (the query for GET, HEAD and DELETE, else
    /// the body in the group's or client's `bodyEncoding`).
    var parameterDestination: ParameterDestination { get }
    /// A body of another kind (raw data, an `Encodable`); nil by default. When set, `parameters`
    /// go to the query.
    var body: RequestBody? { get }
    /// The endpoint's own headers; empty by default.
    var headers: [String: String] { get }
    /// The idle timeout in seconds; nil (the default) uses the group's, else the client's.
    var timeout: TimeInterval? { get }
    /// The whole request's deadline in seconds; nil (the default) uses the group's, else the
    /// client's; `.infinity` means none.
    var deadline: TimeInterval? { get }
    /// Tags, besides the group's; empty by default.
    var tags: Set<String> { get }
    /// The repeat strategy; nil (the default) uses the client's.
    var repeatStrategy: RepeatStrategy? { get }
    /// Makes requests with the same key identical for `.cancelOlder` and `.ignoreNewer` whatever
    /// their parameters (see `Request.repeatKey`); nil by default.
    var repeatKey: String? { get }
    /// The lifetime; `.untilFinished` by default (use `Request.owned(by:)` for an owner).
    var lifetime: Lifetime { get }
    /// The cache policy; nil (the default) uses the group's, else the client's.
    var cachePolicy: CachePolicy? { get }
    /// The retry policy; nil (the default) uses the group's, else the client's.
    var retryPolicy: RetryPolicy? { get }
    /// Validation; nil (the default) uses the group's, else the client's.
    var validation: ResponseValidation? { get }
    /// The endpoint's own hooks, run before the group's on the way out; none by default.
    var hooks: Hooks { get }
    /// Turns the body into `Value`; defaults exist for `Decodable`, `JSON`, `Data` and `String`.
    var serializer: ResponseSerializer<Value> { get }
}

/// Where an endpoint's parameters go.
/// Thread safety: a value type, safe to share.
public enum ParameterDestination: Sendable, Equatable {
    /// The query for GET, HEAD and DELETE; the body otherwise, in the group's or client's `bodyEncoding`.
    case automatic
    /// Always the URL's query.
    case query
    /// A body in this encoding.
    case body(BodyEncoding)
}

extension Endpoint {
    /// `.get`.
    public var method: HTTPMethod { .get }
    /// No parameters.
    public var parameters: Parameters { [:] }
    /// `.automatic`.
    public var parameterDestination: ParameterDestination { .automatic }
    /// No body beyond the parameters.
    public var body: RequestBody? { nil }
    /// No headers of its own.
    public var headers: [String: String] { [:] }
    /// The group's or client's idle timeout.
    public var timeout: TimeInterval? { nil }
    /// The group's or client's deadline.
    public var deadline: TimeInterval? { nil }
    /// No tags of its own.
    public var tags: Set<String> { [] }
    /// The client's repeat strategy.
    public var repeatStrategy: RepeatStrategy? { nil }
    /// No key: the request itself is compared.
    public var repeatKey: String? { nil }
    /// `.untilFinished`.
    public var lifetime: Lifetime { .untilFinished }
    /// The group's or client's cache policy.
    public var cachePolicy: CachePolicy? { nil }
    /// The group's or client's retry policy.
    public var retryPolicy: RetryPolicy? { nil }
    /// The group's or client's validation.
    public var validation: ResponseValidation? { nil }
    /// No hooks of its own.
    public var hooks: Hooks { Hooks() }

    /// The request this definition describes, in its group.
    public func makeRequest() -> Request<Value> {
        var query: Parameters = [:]
        var body = self.body
        switch (parameterDestination, body) {
        case (.query, _), (_, .some):
            query = parameters
        case (.automatic, nil):
            if method.allowsBody && method != .delete {
                body = parameters.isEmpty ? nil : .parameters(parameters)
            } else {
                query = parameters
            }
        case (.body(let encoding), nil):
            body = .parameters(parameters, encoding: encoding)
        }
        var request = Request(path, method: method, query: query, body: body, headers: headers, timeout: timeout, serializer: serializer)
        request.group = group
        request.deadline = deadline
        request.tags = tags
        request.repeatStrategy = repeatStrategy
        request.repeatKey = repeatKey
        request.lifetime = lifetime
        request.cachePolicy = cachePolicy
        request.retryPolicy = retryPolicy
        request.validation = validation
        request.hooks = hooks
        return request
    }
}

extension Endpoint where Value: Decodable {
    /// Decodes JSON with the group's or client's decoder.
    public var serializer: ResponseSerializer<Value> { .decodable() }
}

extension Endpoint where Value == JSON {
    /// Untyped JSON.
    public var serializer: ResponseSerializer<Value> { .json }
}

extension Endpoint where Value == Data {
    /// The raw body.
    public var serializer: ResponseSerializer<Value> { .data }
}

extension Endpoint where Value == String {
    /// Text in the response's charset.
    public var serializer: ResponseSerializer<Value> { .string() }
}
