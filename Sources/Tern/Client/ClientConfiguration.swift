import Foundation

/// Everything a `Client` is set up with: one server's defaults (an "API team" in YBNetwork's terms).
///
/// Build it with `Client(baseURL:configure:)` or set the properties and pass it to
/// `Client(configuration:)`. A client copies it once; changing it afterwards has no effect.
/// Thread safety: a value type, safe to share.
public struct ClientConfiguration: Sendable {
    /// Prefix for relative request paths, e.g. `"https://api.example.com/v1"`. Default nil:
    /// every request must then use an absolute URL. One that no request could use (not an
    /// absolute http(s) URL, no host, a port outside 1–65535) is the client's
    /// `configurationError`.
    public var baseURL: String?
    /// The client's name in its metrics: the `client` label of every series
    /// (`ClientMetrics.client`), so that two clients of one process stay apart in one scrape.
    /// Default nil: the base URL's host, or `tern` without one.
    public var name: String?
    /// Headers added to every request; a request's own headers win. Default empty.
    public var headers: [String: String]
    /// Idle timeout in seconds: an attempt with no sign of life from the server (connecting,
    /// waiting for the response, or between two chunks of it) for this long fails with
    /// `TernError.timedOut`, as URLSession's request timeout does. A download that keeps
    /// receiving never times out; bound the whole request with `deadline`. Events the transport
    /// already received but has not delivered yet (a busy process can hold them up) count as
    /// signs of life: the attempt fails only once they are in. Sub-second values work
    /// on every platform; `.infinity` means none. 0, a negative value or NaN is a mistake: the
    /// client's `configurationError`. Groups and requests may set their own. Default 60.
    public var timeout: TimeInterval
    /// Limit in seconds on a whole request — every attempt, redirect, retry and backoff wait —
    /// after which it fails with `TernError.deadlineExceeded`. A request held at a `RestartGate`
    /// gets a fresh one when the gate restarts it. Nil (the default) or `.infinity`: none.
    /// Groups and requests may set their own; checked like `timeout`.
    public var deadline: TimeInterval?
    /// Where closure and delegate callbacks run unless a request says otherwise. Default `.main`.
    public var callbackQueue: CallbackQueue
    /// Which status codes and content types count as success. Default `200..<300`, serializer's types.
    public var validation: ResponseValidation
    /// How query and form parameters are written. Default `.default` (brackets, `true`/`false`).
    public var parameterEncoding: ParameterEncoding
    /// How `RequestBody.parameters` bodies (and endpoint parameters of POST, PUT, PATCH) are sent:
    /// `.form` (the default, as AFNetworking) or `.json` — a JSON API says so once, here.
    public var bodyEncoding: BodyEncoding
    /// The decoder of `Decodable` requests made without one (date and key strategies for the whole
    /// API). Default nil: a plain `JSONDecoder()`.
    public var decoder: JSONDecoder? {
        get { boxedDecoder?.value }
        set { boxedDecoder = newValue.map(UncheckedBox.init) }
    }
    private(set) var boxedDecoder: UncheckedBox<JSONDecoder>?
    /// The client's hooks — the team's: parameter and URL rewriters, adapters, response rules and
    /// preprocessors, run after a request's and its group's on the way out and first on the way
    /// back (see `Hooks`). Default none.
    public var hooks: Hooks {
        get { storedHooks ?? Hooks() }
        set { storedHooks = newValue.isEmpty ? nil : newValue }
    }
    /// The hooks, nil when there are none (read on every request).
    var storedHooks: Hooks?
    /// Event monitors (a `RequestLogger`, your own `EventMonitor`) told about every request of
    /// the client, each on its own queue. Default none: no event is even built.
    public var monitors: [any EventMonitor]
    /// Makes a span for every request (`TraceContextTracer`, or an adapter to your tracing
    /// system): each attempt then sends its W3C `traceparent` and `tracestate`. Default nil: no
    /// span, no header.
    public var tracer: (any RequestTracer)?
    /// Whether the client adds up its requests for `Client.metrics`: one short lock per request
    /// when on. Off, `metrics` reports only what is in flight and queued now. Default true.
    public var collectsMetrics: Bool
    /// The connectivity monitor `offlineBehavior` consults (e.g. `NetworkMonitor.system`).
    /// Default nil: requests are sent without asking.
    public var networkMonitor: NetworkMonitor?
    /// What an attempt does when `networkMonitor` says the device is offline: `.send` anyway (the
    /// default), `.failFast` with `TernError.transport(URLError(.notConnectedToInternet))` at once
    /// (a cached entry still answers with `servesStaleOnError`, the retry policy still applies),
    /// or `.waitForConnectivity` within the request's deadline.
    public var offlineBehavior: OfflineBehavior
    /// What to do when a request is sent while an identical one is in flight. Default `.allow`.
    public var repeatStrategy: RepeatStrategy
    /// The repeat strategy of the one-line `get(_:parameters:…)` calls, when set; nil (the
    /// default) uses `repeatStrategy`. `Client.shared` sets `.cancelOlder`, as an AFNetworking-style
    /// `NetworkManager` does: a new GET of the same URL cancels the one in flight.
    public var oneLineGetStrategy: RepeatStrategy?
    /// Headers that tell callers apart for repeat strategies, besides `Authorization` and `Cookie`
    /// (which always count): requests that differ in one never share a response or cancel each
    /// other. Default empty.
    public var identityHeaders: Set<String>
    /// How redirects are followed (by Tern, the same on every platform). Default `.default`:
    /// up to 10, credentials stay with their origin, no https → http.
    public var redirectPolicy: RedirectPolicy
    /// When failed requests are tried again (see `RetryPolicy`). Default `.none`: never.
    public var retryPolicy: RetryPolicy
    /// Whether cancelled requests get a `TernError.cancelled` callback (true, the default) or none.
    public var reportsCancellation: Bool
    /// The largest response body a request may receive into memory, in bytes; nil: no limit.
    /// An announced `Content-Length` above it is refused at once, a longer body is stopped as it
    /// crosses it, and the request fails with `TernError.responseTooLarge(limit:)`. Downloads to a
    /// file are not limited. A request may set its own. Default 100 MB.
    public var maximumResponseSize: Int?
    /// How the built-in transport reaches servers: `User-Agent` and `Accept-Language`, the Basic
    /// credential, cookies, TLS, the proxy, connections per host, URLSession's own options (see
    /// `TransportSettings`). Default: `TransportSettings()`.
    public var transportSettings: TransportSettings
    /// The transport to use instead of the platform's default built from this configuration
    /// (`URLSessionTransport` on Apple platforms, `CurlTransport` on Linux): a stub in tests, a
    /// custom transport. Default nil.
    public var transport: (any Transport)?
    /// The cache policy of requests that set none; `.disabled` by default.
    public var cachePolicy: CachePolicy
    /// Where the response cache keeps entries and how much of them: its directory, the limits of
    /// its memory and disk levels, or a disk cache of your own (see `CacheStorageSettings`).
    /// Default: `CacheStorageSettings()`.
    public var cacheStorage: CacheStorageSettings

    /// Creates a configuration with the documented defaults.
    public init() {
        baseURL = nil
        headers = [:]
        timeout = 60
        deadline = nil
        callbackQueue = .main
        validation = .default
        parameterEncoding = .default
        bodyEncoding = .form
        boxedDecoder = nil
        storedHooks = nil
        monitors = []
        tracer = nil
        collectsMetrics = true
        networkMonitor = nil
        offlineBehavior = .send
        transportSettings = TransportSettings()
        maximumResponseSize = 100 << 20
        repeatStrategy = .allow
        oneLineGetStrategy = nil
        identityHeaders = []
        redirectPolicy = .default
        retryPolicy = .none
        reportsCancellation = true
        transport = nil
        cachePolicy = .disabled
        cacheStorage = CacheStorageSettings()
    }
}

/// What an attempt does while the client's `networkMonitor` says the device is offline.
/// Thread safety: a value type, safe to share.
public enum OfflineBehavior: Sendable, Equatable {
    /// Send anyway; the transport reports what happens. The default.
    case send
    /// Fail the attempt at once with `URLError(.notConnectedToInternet)`, without waiting for a timeout.
    case failFast
    /// Hold the attempt until the network is back, within the request's deadline.
    case waitForConnectivity
}
