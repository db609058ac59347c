import Foundation

/// How the built-in transports reach servers: the headers they send on every request, the
/// credential and cookies, TLS, the proxy and the connection limit. Both transports are built
/// from it (`CurlTransport.make(settings:)`, `URLSessionTransport.make(settings:)`); a client
/// builds its transport from `ClientConfiguration.transportSettings`. A transport of your own
/// (`ClientConfiguration.transport`) ignores it.
/// Thread safety: a value type, safe to share.
public struct TransportSettings: Sendable {
    /// The `User-Agent` header, sent the same on every platform. Default `"Tern/<version>"`.
    public var userAgent: String
    /// The `Accept-Language` header; nil sends none (but URLSession on Linux adds its own `en`
    /// to a request without one). Default: the user's preferred languages.
    public var acceptLanguage: String?
    /// Answers HTTP Basic challenges. Default nil: a 401 is delivered as `.unacceptableStatus(401)`.
    public var credential: BasicCredential?
    /// Where cookies are kept and sent from, for either transport. Default nil:
    /// `HTTPCookieStorage.shared`. A storage of its own per client keeps two accounts' sessions
    /// apart (on Linux, `HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier:)`).
    /// Note that on Linux the storage ignores a cookie's `Path` when choosing what to send.
    public var cookieStorage: HTTPCookieStorage?
    /// TLS: trusted authorities, minimum version, client certificate and pinning (see
    /// `TLSConfiguration` for what each transport supports). Default `.default`.
    public var tls: TLSConfiguration
    /// The proxy requests go through: the environment's or system's (the default), none, or an
    /// explicit HTTP proxy (see `ProxyConfiguration`).
    public var proxy: ProxyConfiguration
    /// Where the libcurl transport connects for some hosts instead of asking DNS (see
    /// `HostOverrides`). Default: none.
    public var hostOverrides = HostOverrides()
    /// Maximum simultaneous connections to one host (URLSession's `httpMaximumConnectionsPerHost`). Default 6.
    public var maximumConnectionsPerHost: Int
    /// What only the URLSession transport reads: how it delivers bodies, and a last chance to
    /// adjust its `URLSessionConfiguration`. Ignored by the libcurl transport. Default: streamed
    /// delivery, no change.
    public var urlSession: URLSessionTransport.Options

    /// Creates settings with the documented defaults.
    public init() {
        userAgent = "Tern/\(ternVersion)"
        acceptLanguage = Self.preferredLanguages()
        credential = nil
        cookieStorage = nil
        tls = .default
        proxy = .environment
        maximumConnectionsPerHost = 6
        urlSession = URLSessionTransport.Options()
    }

    /// The headers every request carries unless it sets its own: `User-Agent`, `Accept-Encoding`
    /// and `Accept-Language`. The built-in transports send them (URLSession through its session
    /// configuration); for any other transport (`Transport.sendsWireHeaders` false: a stub, your
    /// own) the client adds them to each request. `Accept-Encoding` is `gzip, deflate, br`; the
    /// libcurl transport also offers `zstd` when its libcurl decodes it (Debian's and Ubuntu's do).
    public var wireHeaders: [String: String] {
        var headers: [String: String] = ["User-Agent": userAgent, "Accept-Encoding": Self.defaultAcceptEncoding]
        headers["Accept-Language"] = acceptLanguage
        return headers
    }

    /// The encodings every transport decodes; the libcurl transport adds `zstd` where its
    /// libcurl decodes it.
    static let defaultAcceptEncoding = "gzip, deflate, br"

    private static func preferredLanguages() -> String? {
        let languages = Locale.preferredLanguages.prefix(3)
        guard !languages.isEmpty else { return nil }
        return languages.enumerated().map { index, language in
            index == 0 ? language : "\(language);q=\(String(format: "%.1f", 1.0 - Double(index) * 0.1))"
        }.joined(separator: ", ")
    }
}

/// A user name and password for HTTP Basic authentication challenges.
/// Thread safety: a value type, safe to share.
public struct BasicCredential: Sendable, Hashable {
    /// The user name.
    public var user: String
    /// The password.
    public var password: String

    /// Creates a credential.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }
}
