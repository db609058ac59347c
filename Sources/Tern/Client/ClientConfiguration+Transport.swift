import Foundation

/// The built-in transports made from a client configuration, and the transport settings under
/// their former names.
extension ClientConfiguration {
    /// The session configuration a `URLSessionTransport` of this configuration uses: its
    /// `transportSettings`, with a session timeout that never cuts `timeout` short.
    public func makeSessionConfiguration() -> URLSessionConfiguration {
        transportSettings.makeSessionConfiguration(idleTimeout: timeout)
    }

    /// The headers every request carries unless it sets its own (`TransportSettings.wireHeaders`).
    @available(*, deprecated, renamed: "transportSettings.wireHeaders")
    public var wireHeaders: [String: String] { transportSettings.wireHeaders }

    /// The Basic credential (`TransportSettings.credential`).
    @available(*, deprecated, renamed: "transportSettings.credential")
    public var credential: BasicCredential? {
        get { transportSettings.credential }
        set { transportSettings.credential = newValue }
    }

    /// Where cookies are kept (`TransportSettings.cookieStorage`).
    @available(*, deprecated, renamed: "transportSettings.cookieStorage")
    public var cookieStorage: HTTPCookieStorage? {
        get { transportSettings.cookieStorage }
        set { transportSettings.cookieStorage = newValue }
    }

    /// The `User-Agent` header (`TransportSettings.userAgent`).
    @available(*, deprecated, renamed: "transportSettings.userAgent")
    public var userAgent: String {
        get { transportSettings.userAgent }
        set { transportSettings.userAgent = newValue }
    }

    /// The `Accept-Language` header (`TransportSettings.acceptLanguage`).
    @available(*, deprecated, renamed: "transportSettings.acceptLanguage")
    public var acceptLanguage: String? {
        get { transportSettings.acceptLanguage }
        set { transportSettings.acceptLanguage = newValue }
    }

    /// TLS settings (`TransportSettings.tls`).
    @available(*, deprecated, renamed: "transportSettings.tls")
    public var tls: TLSConfiguration {
        get { transportSettings.tls }
        set { transportSettings.tls = newValue }
    }

    /// The proxy (`TransportSettings.proxy`).
    @available(*, deprecated, renamed: "transportSettings.proxy")
    public var proxy: ProxyConfiguration {
        get { transportSettings.proxy }
        set { transportSettings.proxy = newValue }
    }

    /// Connections per host (`TransportSettings.maximumConnectionsPerHost`).
    @available(*, deprecated, renamed: "transportSettings.maximumConnectionsPerHost")
    public var maximumConnectionsPerHost: Int {
        get { transportSettings.maximumConnectionsPerHost }
        set { transportSettings.maximumConnectionsPerHost = newValue }
    }

    /// URLSession's own options (`TransportSettings.urlSession`).
    @available(*, deprecated, renamed: "transportSettings.urlSession")
    public var urlSession: URLSessionTransport.Options {
        get { transportSettings.urlSession }
        set { transportSettings.urlSession = newValue }
    }
}

extension URLSessionTransport {
    /// The transport a client with `configuration` gets on Apple platforms: built from its
    /// `transportSettings`, with its idle `timeout`.
    public static func make(configuration: ClientConfiguration) -> URLSessionTransport {
        make(settings: configuration.transportSettings, idleTimeout: configuration.timeout)
    }
}

#if canImport(Glibc) || canImport(Musl)
extension CurlTransport {
    /// The transport a client with `configuration` gets on Linux, built from its
    /// `transportSettings`; nil when libcurl cannot be used (see `unavailableReason`).
    public static func make(configuration: ClientConfiguration) -> CurlTransport? {
        make(settings: configuration.transportSettings)
    }
}
#endif
