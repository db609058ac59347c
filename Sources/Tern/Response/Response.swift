import Foundation

/// A successful response: the request that was sent, the HTTP response, the raw body, the
/// decoded value and how long it took.
/// Thread safety: a value type, safe to share.
public struct Response<Value: Sendable>: Sendable {
    /// The `URLRequest` as Tern sent it (URL with the query, headers, body).
    public let request: URLRequest
    /// The HTTP response (status, headers).
    public let httpResponse: HTTPURLResponse
    /// The body as received (decompressed).
    public let data: Data
    /// The decoded value.
    public let value: Value
    /// When the request started and how long it took to the decoded value.
    public let timing: Timing
    /// Where it came from: the network, the cache, a revalidated or a stale cache entry.
    public let source: ResponseSource
    /// Which exchange with the transport produced it: 1 for the first, more after a followed
    /// redirect or a retry; 0 when the cache answered without one.
    public let attempt: Int
    /// The redirects followed to get here, in order (empty when there were none).
    public let redirects: [Redirect]

    /// Creates a response; Tern builds these, custom transports and tests may too.
    public init(request: URLRequest, httpResponse: HTTPURLResponse, data: Data, value: Value, timing: Timing,
                source: ResponseSource = .network, attempt: Int = 1, redirects: [Redirect] = []) {
        self.request = request
        self.httpResponse = httpResponse
        self.data = data
        self.value = value
        self.timing = timing
        self.source = source
        self.attempt = attempt
        self.redirects = redirects
    }

    /// The URL the response came from: the last redirect's target, else the request's URL.
    public var url: URL? { httpResponse.url ?? redirects.last?.to ?? request.url }

    /// The HTTP status code.
    public var statusCode: Int { httpResponse.statusCode }

    /// A header of the response, looked up case-insensitively.
    public func header(_ name: String) -> String? { httpResponse.value(forHTTPHeaderField: name) }
}

extension Response where Value == JSON {
    /// The parsed JSON body (same as `value`), as in the seeds' `completion(json, error)`.
    public var json: JSON { value }
}

/// When a request started and how long it took.
/// Thread safety: a value type, safe to share.
public struct Timing: Sendable, Hashable {
    /// Wall-clock time at which `send` was called.
    public let start: Date
    /// Seconds from `send` to the decoded value (monotonic clock).
    public let duration: TimeInterval

    /// Creates a timing.
    public init(start: Date, duration: TimeInterval) {
        self.start = start
        self.duration = duration
    }
}
