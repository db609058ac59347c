#if canImport(Glibc) || canImport(Musl)
import Foundation

/// What every exchange of one `CurlTransport` is set up with, from the client configuration.
struct CurlSettings: Sendable {
    /// Headers an exchange carries unless its request sets them (`User-Agent`, …).
    let headers: [String: String]
    /// Answers Basic (and Digest) challenges; without it a 401 comes back as it is.
    let credential: BasicCredential?
    /// Where cookies come from and go.
    let cookies: HTTPCookieStorage
    /// Authorities, TLS floor, client certificate and pins.
    let tls: TLSConfiguration
    /// The proxy, if not the environment's.
    let proxy: ProxyConfiguration

    init(_ configuration: ClientConfiguration) {
        headers = configuration.wireHeaders
        credential = configuration.credential
        cookies = configuration.cookieStorage ?? .shared
        tls = configuration.tls
        proxy = configuration.proxy
    }
}
#endif
