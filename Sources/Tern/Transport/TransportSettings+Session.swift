import Foundation

/// The session configuration of a `URLSessionTransport`, built next to the transport.
extension TransportSettings {
    /// The session configuration Tern uses for a `URLSessionTransport`: no `URLCache` (it costs
    /// about 20% throughput on Linux, never stores anything there, and Tern has its own cache),
    /// the same wire headers on every platform, and these settings. `idleTimeout`: the client's
    /// idle timeout in seconds (`ClientConfiguration.timeout`), which the session's own request
    /// timeout must not cut short.
    public func makeSessionConfiguration(idleTimeout: TimeInterval = 60) -> URLSessionConfiguration {
        let session = URLSessionConfiguration.default
        session.urlCache = nil
        // Credentials come from `credential`, per client: no shared store that would let one
        // client's credential answer another session's challenge.
        session.urlCredentialStorage = nil
        session.requestCachePolicy = .reloadIgnoringLocalCacheData
        session.httpAdditionalHeaders = wireHeaders
        session.httpCookieStorage = cookieStorage ?? .shared
        session.httpMaximumConnectionsPerHost = maximumConnectionsPerHost
        session.timeoutIntervalForRequest = Platform.sessionTimeout(forDeadline: idleTimeout)
        if let proxies = proxy.connectionProxyDictionary { session.connectionProxyDictionary = proxies }
        #if canImport(Security)
        switch tls.minimumVersion {
        case .v1_2?: session.tlsMinimumSupportedProtocolVersion = .TLSv12
        case .v1_3?: session.tlsMinimumSupportedProtocolVersion = .TLSv13
        case nil: break
        }
        #endif
        urlSession.configureSession(session)
        return session
    }
}
