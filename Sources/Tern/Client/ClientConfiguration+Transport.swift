import Foundation

/// The built-in transports made from a client configuration.
extension ClientConfiguration {
    /// The session configuration a `URLSessionTransport` of this configuration uses: its
    /// `transportSettings`, with a session timeout that never cuts `timeout` short.
    public func makeSessionConfiguration() -> URLSessionConfiguration {
        transportSettings.makeSessionConfiguration(idleTimeout: timeout)
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
