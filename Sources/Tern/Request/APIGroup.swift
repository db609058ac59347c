import Foundation

/// The endpoints of one API team or server, sharing configuration without subclassing — the
/// Swift form of YBNetwork's one base request per team (`YBBaseRequest`).
///
/// A group gives its requests a base URL, headers, parameter and body encodings, a JSON decoder,
/// validation, timeout, retry and cache defaults, tags and hooks. Each applies between the
/// client's and the request's own: the request wins over the group, the group over the client;
/// headers and tags are merged; hooks run in the order `Hooks` documents. Requests join a group
/// through an `Endpoint` definition, or by setting `Request.group`.
///
/// The base URL can be switched at run time (a debug menu's production / staging / mock server
/// switch); requests already sent keep the URL they were built with.
/// ```swift
/// enum WeatherAPI {
///     static let group = APIGroup("weather", baseURL: "https://api.weather.example/v2") {
///         $0.headers["X-App"] = "weather"
///         $0.bodyEncoding = .json
///     }
/// }
/// WeatherAPI.group.baseURL = "http://127.0.0.1:8080/v2"   // switch to the local mock server
/// ```
/// Thread safety: safe to use from any thread; its settings change under one lock.
public final class APIGroup: Sendable {
    /// What a group gives its requests; every default is "nothing here, ask the client".
    /// Thread safety: a value type, safe to share.
    public struct Settings: Sendable {
        /// Prefix for the group's relative paths; nil uses the client's base URL.
        public var baseURL: String?
        /// Headers added to the group's requests, over the client's; a request's own headers win.
        public var headers: [String: String] = [:]
        /// How query and form parameters are written; nil uses the client's.
        public var parameterEncoding: ParameterEncoding?
        /// How `RequestBody.parameters` bodies are sent; nil uses the client's.
        public var bodyEncoding: BodyEncoding?
        /// Validation for requests that set none; nil uses the client's.
        public var validation: ResponseValidation?
        /// Idle timeout in seconds for requests that set none; nil uses the client's.
        public var timeout: TimeInterval?
        /// Whole-request deadline in seconds for requests that set none; nil uses the client's.
        public var deadline: TimeInterval?
        /// Retry policy for requests that set none; nil uses the client's.
        public var retryPolicy: RetryPolicy?
        /// Cache policy for requests that set none; nil uses the client's.
        public var cachePolicy: CachePolicy?
        /// Tags added to every request of the group (so `cancel(tag:)` can stop the whole team).
        public var tags: Set<String> = []
        /// The group's hooks, run between the request's and the client's.
        public var hooks = Hooks()
        /// How the bodies of the group's requests are compressed when a request says nothing
        /// (`Request.compression`); nil sends them as they are. Default nil.
        public var requestCompression: RequestCompression?
        private var decoderBox: UncheckedBox<JSONDecoder>?

        /// The decoder of the group's `Decodable` requests made without one; nil uses the client's.
        public var decoder: JSONDecoder? {
            get { decoderBox?.value }
            set { decoderBox = newValue.map(UncheckedBox.init) }
        }

        var boxedDecoder: UncheckedBox<JSONDecoder>? { decoderBox }

        /// Settings that change nothing.
        public init() {}
    }

    /// The group's name, for logs and descriptions.
    public let name: String
    /// The settings, replaced whole on every change: a request takes them with one retain.
    private let state: Locked<Snapshot>

    /// The group's settings at one moment, shared by every request sent under them.
    /// Thread safety: immutable.
    final class Snapshot: Sendable {
        let settings: Settings

        init(_ settings: Settings) {
            self.settings = settings
        }
    }

    /// Creates a group.
    /// - Parameters:
    ///   - name: For logs and descriptions.
    ///   - baseURL: Prefix for the group's relative paths; nil uses the client's.
    ///   - configure: Sets the rest of the group's settings.
    public init(_ name: String, baseURL: String? = nil, configure: (inout Settings) -> Void = { _ in }) {
        var settings = Settings()
        settings.baseURL = baseURL
        configure(&settings)
        self.name = name
        self.state = Locked(Snapshot(settings))
    }

    /// The group's settings now; a request reads them once, when it is sent.
    public var settings: Settings { snapshot.settings }

    /// The group's settings now, as the one shared value a request keeps.
    var snapshot: Snapshot { state.withLock { $0 } }

    /// The base URL of the group's relative paths; setting it switches the server for requests
    /// sent from now on.
    public var baseURL: String? {
        get { snapshot.settings.baseURL }
        set { update { $0.baseURL = newValue } }
    }

    /// Changes the settings in one step; requests sent from now on see the change.
    public func update(_ change: (inout Settings) -> Void) {
        state.withLock { snapshot in
            var settings = snapshot.settings
            change(&settings)
            snapshot = Snapshot(settings)
        }
    }
}
