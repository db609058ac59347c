import Foundation

/// Sends requests to one server (or any, with absolute URLs) and delivers their results.
///
/// Use `Client.shared` for one-off calls, or one client per server ("API team") with its own base
/// URL, headers, timeout and callback queue:
/// ```swift
/// let weatherAPI = Client(baseURL: "https://api.weather.example") {
///     $0.timeout = 15
///     $0.headers["X-Device"] = deviceID
/// }
/// ```
/// A client owns one transport for its whole life (a `URLSession` on Apple platforms, a libcurl
/// multi handle on Linux). `invalidate()` ends it: requests in flight are cancelled and later
/// sends fail with `TernError.clientInvalidated`.
/// Thread safety: safe to use from any thread.
public final class Client: Sendable {
    /// The library version, sent in the default `User-Agent`.
    public static let version = ternVersion

    /// The shared client: default configuration, one session for the whole process; its one-line
    /// `get` calls cancel an older identical GET (`oneLineGetStrategy = .cancelOlder`). Set it up
    /// with `configureShared` before its first use.
    public static let shared: Client = SharedClientSetup.standard.makeClient()

    /// Configures `Client.shared` before its first use (at launch, before any request): `configure`
    /// starts from the shared client's configuration (the defaults, with
    /// `oneLineGetStrategy = .cancelOlder`). Calls before the first use add up.
    /// - Returns: False, changing nothing, once `shared` has been used: a process has one shared
    ///   client, and its configuration is fixed when it is created.
    @discardableResult
    public static func configureShared(_ configure: (inout ClientConfiguration) -> Void) -> Bool {
        SharedClientSetup.standard.configure(configure)
    }

    /// The configuration the client was created with.
    public let configuration: ClientConfiguration
    /// The transport, and the shared exchanges open on it (`Pipeline/SharingTransport.swift`).
    let exchanges: SharingTransport
    var transport: any Transport { exchanges.transport }
    /// The response cache (memory now, disk opened on first use; see `Caching/`).
    let responseCache: ResponseCache
    /// The requests in flight (see `Client+Registry.swift`).
    let registry = Locked(Registry())
    /// The totals behind `metrics` (see `Monitoring/Metrics/`).
    let statistics: ClientStatistics
    private let invalidated = Locked(false)
    /// What in the configuration the transport cannot honour; nil when everything can be. Set at
    /// creation (and told once on standard error): every request of the client then fails at
    /// once with it, so that a pin or a TLS floor is never silently dropped.
    public let configurationError: TernError?

    /// Creates a client.
    /// - Parameter configuration: Its defaults. Unless `configuration.transport` names one, the
    ///   client gets the platform's default transport: on Linux the libcurl transport
    ///   (`CurlTransport`), on Apple platforms `URLSessionTransport`. On Linux the environment
    ///   variable `TERN_TRANSPORT=urlsession` chooses URLSession instead, and where libcurl cannot
    ///   be used (none, or older than 7.68.0) the client falls back to URLSession, saying so once
    ///   on standard error (`TERN_LIBCURL` names the library to load; `none` hides it).
    public init(configuration: ClientConfiguration = ClientConfiguration()) {
        self.configuration = configuration
        statistics = ClientStatistics(client: configuration.name ?? configuration.baseURL.flatMap { URL(string: $0)?.host } ?? "tern")
        let transport = configuration.transport ?? Self.defaultTransport(for: configuration)
        self.exchanges = SharingTransport(transport)
        let unsupported =
            transport is URLSessionTransport
            ? configuration.transportSettings.tls.unsupportedByURLSession ?? configuration.transportSettings.proxy.unsupportedByURLSession
                ?? configuration.transportSettings.hostOverrides.unsupportedByURLSession
            : nil
        if let reason = SettingCheck.problem(in: configuration) ?? configuration.transportSettings.hostOverrides.problem ?? unsupported {
            configurationError = .unsupportedConfiguration(reason)
            FileHandle.standardError.write(Data("Tern: this client cannot send requests: \(reason)\n".utf8))
        } else {
            configurationError = nil
        }
        self.responseCache = ResponseCache(
            directory: configuration.cacheStorage.directory ?? ResponseCache.defaultDirectory(baseURL: configuration.baseURL),
            memory: configuration.cacheStorage.memory, disk: configuration.cacheStorage.disk, store: configuration.cacheStorage.diskStore)
    }

    /// The transport a client gets when its configuration names none.
    static func defaultTransport(for configuration: ClientConfiguration) -> any Transport {
        #if canImport(Glibc) || canImport(Musl)
        if !prefersURLSession {
            if let curl = CurlTransport.make(configuration: configuration) { return curl }
            fallbackNotice.withLock { noticed in
                guard !noticed else { return }
                noticed = true
                let reason = CurlTransport.unavailableReason ?? "unknown reason"
                FileHandle.standardError.write(Data("Tern: libcurl cannot be used (\(reason)); using URLSession\n".utf8))
            }
        }
        #endif
        return URLSessionTransport.make(configuration: configuration)
    }

    /// `TERN_TRANSPORT=urlsession` in the environment, read once.
    private static let prefersURLSession = ProcessInfo.processInfo.environment["TERN_TRANSPORT"]?.lowercased() == "urlsession"
    /// Whether the one-line notice of a fallback to URLSession was printed.
    private static let fallbackNotice = Locked(false)

    /// Creates a client for one server.
    /// - Parameters:
    ///   - baseURL: Prefix for relative request paths.
    ///   - configure: Adjusts the rest of the configuration.
    public convenience init(baseURL: String?, configure: (inout ClientConfiguration) -> Void = { _ in }) {
        var configuration = ClientConfiguration()
        configuration.baseURL = baseURL
        configure(&configuration)
        self.init(configuration: configuration)
    }

    /// Whether `invalidate()` has been called.
    public var isInvalidated: Bool { invalidated.withLock { $0 } }

    /// Cancels every request in flight (they end with `TernError.cancelled(.clientInvalidated)`)
    /// and releases the session. Later sends fail with `TernError.clientInvalidated`. Idempotent.
    public func invalidate() {
        invalidated.withLock { $0 = true }
        for lifecycle in registry.withLock({ Array($0.lifecycles.values) }) { lifecycle.cancel(.clientInvalidated) }
        transport.invalidate()
    }
}
