import Foundation

/// How a request uses the client's response cache: where it reads from, where it writes to, who
/// decides how long an entry stays fresh (the app's `maxAge`, or the server's `Cache-Control`),
/// what the key is made of and what may be stored.
///
/// ```swift
/// // What the server says (RFC 9111), as URLSession and OkHttp do:
/// let forecast = Request<Forecast>("forecast/chengdu").caching(.http)
/// // What the app says: cached favourites first, then fresh ones; only business successes stored.
/// let favourites = Request<[City]>("favourites").caching(.init(read: .cacheThenNetwork, write: .both, maxAge: 300,
///                                                             shouldStore: { $0.json?["code"]?.int == 0 }))
/// ```
/// Thread safety: a value type, safe to share.
public struct CachePolicy: Sendable {
    /// Where a request looks first.
    public enum ReadMode: Sendable, Equatable {
        /// Never read the cache (writes still follow `write`).
        case networkOnly
        /// A fresh entry answers without any network request; otherwise the network does
        /// (revalidating an expired entry that has an `ETag` or `Last-Modified`).
        case cacheElseNetwork
        /// A fresh entry goes to the cache-hit callback first; the network response (revalidated
        /// when the entry has a validator) then goes to the normal one.
        case cacheThenNetwork
        /// Only the cache: a fresh entry, else `TernError.cacheMiss`. No network request.
        case cacheOnly
    }

    /// Where a response is stored.
    public struct Write: OptionSet, Sendable, Hashable {
        public let rawValue: Int
        /// Creates a set of levels.
        public init(rawValue: Int) { self.rawValue = rawValue }
        /// Nowhere.
        public static let none: Write = []
        /// The client's memory cache (this process only).
        public static let memory = Write(rawValue: 1)
        /// The client's disk cache (survives restarts).
        public static let disk = Write(rawValue: 2)
        /// Memory and disk.
        public static let both: Write = [.memory, .disk]
    }

    /// Who decides how long a stored response stays fresh.
    public enum Freshness: Sendable, Equatable {
        /// The app: `maxAge`. The response's `Cache-Control` is read for `no-store` only. The default.
        case app
        /// The server, as a private cache does by RFC 9111: the response's `Cache-Control`
        /// (`max-age`, `no-cache`, `must-revalidate`, `stale-while-revalidate`, `stale-if-error`),
        /// `Expires`, `Date` and `Age`, else a heuristic from `Last-Modified`; and the request's own
        /// `Cache-Control` (`no-cache`, `max-age`, `min-fresh`, `max-stale`, `only-if-cached`,
        /// `no-store`). `maxAge` is ignored. Only GET and HEAD responses are stored.
        case server
    }

    /// Where the request looks first; `.networkOnly` by default.
    public var read: ReadMode
    /// Where a response is stored; `.none` by default.
    public var write: Write
    /// Seconds a stored response stays fresh; 0 means it never expires. An expired entry is a miss,
    /// and is removed unless it can still serve: it has a validator (`ETag`, `Last-Modified`) to
    /// revalidate with, or the policy serves stale entries on error.
    public var maxAge: TimeInterval
    /// Request headers whose values are part of the key (e.g. `Accept-Language`, a user id):
    /// two requests that differ in one of these get different entries; other headers are ignored.
    public var keyHeaders: [String]
    /// Query and form (or top-level JSON) parameters left out of the key: timestamps, nonces,
    /// signatures that change on every call.
    public var ignoredParameters: Set<String>
    /// Prefixes the key (e.g. the app version), so that changing it invalidates every entry.
    public var namespace: String
    /// Rewrites the canonical key text before it is hashed (your own key scheme).
    public var keyTransform: (@Sendable (String) -> String)?
    /// Decides whether a network response is stored (e.g. only when the body's `code` is 0).
    /// Runs off the main thread, after decoding. Nil stores every 2xx response.
    public var shouldStore: (@Sendable (StoreCandidate) -> Bool)?
    /// When the network fails (a transport error or a 5xx), deliver a cached entry however old,
    /// marked `.stale`, instead of the error. With `.server` freshness, not an entry whose
    /// response said `must-revalidate` or `no-cache`.
    public var servesStaleOnError: Bool
    /// Who decides freshness: the app's `maxAge` (`.app`, the default) or the server's headers.
    public var freshness: Freshness
    /// Every stored entry is revalidated before use: a background revalidation's own request.
    var revalidatesAlways = false

    /// Creates a policy.
    public init(
        read: ReadMode = .networkOnly, write: Write = .none, maxAge: TimeInterval = 0,
        keyHeaders: [String] = [], ignoredParameters: Set<String> = [], namespace: String = "",
        keyTransform: (@Sendable (String) -> String)? = nil,
        shouldStore: (@Sendable (StoreCandidate) -> Bool)? = nil, servesStaleOnError: Bool = false,
        freshness: Freshness = .app
    ) {
        self.read = read
        self.write = write
        self.maxAge = maxAge
        self.keyHeaders = keyHeaders
        self.ignoredParameters = ignoredParameters
        self.namespace = namespace
        self.keyTransform = keyTransform
        self.shouldStore = shouldStore
        self.servesStaleOnError = servesStaleOnError
        self.freshness = freshness
    }

    /// No cache at all: the default.
    public static let disabled = CachePolicy()

    /// A private HTTP cache, as the server says (RFC 9111): a fresh entry answers without the
    /// network, a stale one is revalidated (or answered at once within `stale-while-revalidate`,
    /// while one background revalidation runs), responses go to memory and disk. What a client
    /// that simply wants caching should use.
    public static let http = CachePolicy(read: .cacheElseNetwork, write: .both, freshness: .server)

    /// Whether the policy touches the cache at all.
    var isActive: Bool { read != .networkOnly || !write.isEmpty || servesStaleOnError }
}

/// What a store predicate sees of a network response.
/// Thread safety: a value type, safe to share.
public struct StoreCandidate: Sendable {
    /// The HTTP response (status, headers).
    public let httpResponse: HTTPURLResponse
    /// The body.
    public let data: Data
    /// The value the request's serializer decoded.
    public let value: any Sendable

    /// The status code.
    public var statusCode: Int { httpResponse.statusCode }
    /// The body parsed as JSON, or nil when it is not JSON.
    public var json: JSON? { try? JSON(data: data) }
}

/// Where a response came from.
/// Thread safety: a value type, safe to share.
public enum ResponseSource: Sendable, Equatable {
    /// The network.
    case network
    /// A fresh cache entry (or any entry, for a cache-then-network hit).
    case cache
    /// A cache entry the server confirmed with 304 Not Modified.
    case revalidated
    /// An expired cache entry: delivered because the network failed (`servesStaleOnError`,
    /// `stale-if-error`), or because the request or the response allowed it (`max-stale`,
    /// `stale-while-revalidate`).
    case stale
}

extension Request {
    /// A copy that uses the cache as `policy` says.
    public func caching(_ policy: CachePolicy) -> Request {
        var copy = self
        copy.cachePolicy = policy
        return copy
    }
}
