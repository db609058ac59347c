import Foundation

/// A successful response: the request that was sent, the HTTP response, the raw body, the
/// decoded value and how long it took.
/// Thread safety: a value type, safe to share.
public struct Response<Value: Sendable>: Sendable {
    /// The `URLRequest` as Tern sent it (URL with the query, headers, body).
    public let request: URLRequest
    /// The status and headers, from which `httpResponse` is built when asked for.
    let head: ResponseHead
    /// The body as received (decompressed).
    public let data: Data
    /// The decoded value.
    public let value: Value
    /// When the request started and how long it took to the decoded value.
    public let timing: Timing
    /// Where it came from, which attempt produced it, the redirects before it and its metrics, in
    /// one word: a response is returned through several async frames, and two more words there
    /// pushed the async `send` past its task's first allocation slab, costing every request in
    /// flight 1 KB.
    private let trail: Trail

    /// Where it came from: the network, the cache, a revalidated or a stale cache entry.
    public var source: ResponseSource {
        switch trail {
        case .first(let source): source
        case .detailed(let details): details.source
        }
    }

    /// Which exchange with the transport produced it: 1 for the first, more after a followed
    /// redirect or a retry; 0 when the cache answered without one.
    public var attempt: Int {
        switch trail {
        case .first(let source): source == .cache ? 0 : 1
        case .detailed(let details): details.attempt
        }
    }

    /// The redirects followed to get here, in order (empty when there were none).
    public var redirects: [Redirect] {
        if case .detailed(let details) = trail { details.redirects } else { [] }
    }

    /// How the exchange that produced it went (timings, connection reuse, HTTP version, bytes);
    /// nil when the cache answered without one. See `Metrics` for which transport fills what.
    public var metrics: Metrics? {
        if case .detailed(let details) = trail { details.metrics } else { nil }
    }

    /// Creates a response; Tern builds these, custom transports and tests may too.
    public init(
        request: URLRequest, httpResponse: HTTPURLResponse, data: Data, value: Value, timing: Timing,
        source: ResponseSource = .network, attempt: Int = 1, redirects: [Redirect] = [], metrics: Metrics? = nil
    ) {
        self.init(
            request: request, head: ResponseHead(httpResponse), data: data, value: value, timing: timing, source: source,
            attempt: attempt, redirects: redirects, metrics: metrics)
    }

    /// Creates a response from a head (Foundation's response built only if asked for).
    init(
        request: URLRequest, head: ResponseHead, data: Data, value: Value, timing: Timing,
        source: ResponseSource, attempt: Int, redirects: [Redirect], metrics: Metrics?
    ) {
        self.request = request
        self.head = head
        self.data = data
        self.value = value
        self.timing = timing
        let first = redirects.isEmpty && metrics == nil && attempt == (source == .cache ? 0 : 1)
        trail =
            first
            ? .first(source)
            : .detailed(ResponseDetails(source: source, attempt: attempt, redirects: redirects, metrics: metrics))
    }

    /// The same response with another value.
    init<Other>(_ other: Response<Other>, value: Value) {
        request = other.request
        head = other.head
        data = other.data
        self.value = value
        timing = other.timing
        trail = other.trail
    }

    /// The HTTP response (status, headers), as Foundation's value: built on first use from what
    /// the transport read (the libcurl transport does not build one unless asked).
    public var httpResponse: HTTPURLResponse { head.httpResponse }

    /// The URL the response came from: the last redirect's target, else the request's URL.
    public var url: URL? { head.url ?? redirects.last?.to ?? request.url }

    /// The HTTP status code.
    public var statusCode: Int { head.statusCode }

    /// The response's header fields (repeated fields joined with ", ").
    public var headers: [String: String] { head.headerFields }

    /// A header of the response, looked up case-insensitively.
    public func header(_ name: String) -> String? { head.value(forHTTPHeaderField: name) }
}

/// Where a response came from among a request's attempts, in one word.
enum Trail: Sendable {
    /// From the cache (attempt 0) or the first attempt (1), without redirects or metrics.
    case first(ResponseSource)
    /// Anything else: a later attempt, redirects, metrics.
    case detailed(ResponseDetails)
}

/// A response's origin and metrics, when `Trail.first` cannot say it.
final class ResponseDetails: Sendable {
    let source: ResponseSource
    let attempt: Int
    let redirects: [Redirect]
    let metrics: Metrics?

    init(source: ResponseSource, attempt: Int, redirects: [Redirect], metrics: Metrics?) {
        self.source = source
        self.attempt = attempt
        self.redirects = redirects
        self.metrics = metrics
    }
}

extension Response where Value == JSON {
    /// The parsed JSON body (same as `value`), as in an AFNetworking-style `completion(json, error)`.
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

extension Response: CustomStringConvertible, CustomDebugStringConvertible {
    /// `200 GET https://… — 1234 bytes from network`, secrets in the URL redacted.
    public var description: String {
        var text =
            "\(statusCode) \(request.httpMethod ?? "GET") \(Redaction.shared.url(url ?? request.url)) — \(data.count) bytes from \(source)"
        if attempt > 1 { text += " (attempt \(attempt))" }
        return text
    }

    /// The description plus the request and response headers, secrets redacted.
    public var debugDescription: String {
        let redaction = Redaction.shared
        let sent = redaction.headers(request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }.map { "\n  > \($0.key): \($0.value)" }
        let received = redaction.headers(httpResponse.allHeaderFields as? [String: String] ?? [:]).sorted { $0.key < $1.key }
            .map { "\n  < \($0.key): \($0.value)" }
        return description + sent.joined() + received.joined()
    }
}
