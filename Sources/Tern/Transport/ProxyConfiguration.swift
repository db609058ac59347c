import Foundation

/// Which proxy a client's requests go through.
///
/// - `.environment` (the default): what the process environment says — `http_proxy`,
///   `https_proxy` (or `HTTPS_PROXY`), `all_proxy` and `no_proxy`, as curl reads them — on Linux;
///   the system's proxy settings on Apple platforms.
/// - `.direct`: no proxy, whatever the environment or the system says.
/// - `.http(host:port:excluding:)`: this HTTP proxy for both `http` and `https` URLs (HTTPS
///   through `CONNECT`), except for the hosts listed (exact names, or `.example.com` for a domain
///   and its subdomains).
/// - `.socks5(host:port:excluding:)`: this SOCKS5 proxy, which resolves the host names itself.
/// The libcurl transport honours all four, URLSession on Apple platforms too (through
/// `connectionProxyDictionary`). URLSession on Linux only knows the environment's: it ignores
/// `connectionProxyDictionary` (measured: an explicit proxy went unused, and `.direct` still used
/// `http_proxy`), so a client configured otherwise on it is created with
/// `Client.configurationError` set, and its requests fail with it rather than bypass the setting.
/// Thread safety: a value type, safe to share.
public struct ProxyConfiguration: Sendable, Equatable, CustomStringConvertible {
    enum Kind: Sendable, Equatable {
        case environment, direct
        case http(host: String, port: Int, excluding: [String])
        case socks5(host: String, port: Int, excluding: [String])
    }

    let kind: Kind

    /// The environment's proxy (Linux) or the system's (Apple platforms).
    public static let environment = ProxyConfiguration(kind: .environment)
    /// No proxy at all.
    public static let direct = ProxyConfiguration(kind: .direct)
    /// An HTTP proxy at `host:port` for every request, except to the hosts in `excluding`.
    public static func http(host: String, port: Int, excluding: [String] = []) -> ProxyConfiguration {
        ProxyConfiguration(kind: .http(host: host, port: port, excluding: excluding))
    }

    /// A SOCKS5 proxy at `host:port` for every request, except to the hosts in `excluding`. The
    /// proxy resolves the host names (`socks5h`): the device asks no DNS for them, as over Tor
    /// or into a private network only the proxy can see.
    public static func socks5(host: String, port: Int, excluding: [String] = []) -> ProxyConfiguration {
        ProxyConfiguration(kind: .socks5(host: host, port: port, excluding: excluding))
    }

    /// `environment`, `direct`, `http://host:port` or `socks5h://host:port`.
    public var description: String {
        switch kind {
        case .environment: "environment"
        case .direct: "direct"
        case .http(let host, let port, _): "http://\(host):\(port)"
        case .socks5(let host, let port, _): "socks5h://\(host):\(port)"
        }
    }

    /// Why `URLSessionTransport` on this platform cannot honour it; nil when it can.
    var unsupportedByURLSession: String? {
        #if canImport(Darwin)
        return nil
        #else
        return kind == .environment
            ? nil
            : "an explicit proxy (or .direct) needs the libcurl transport on Linux: FoundationNetworking's URLSession "
                + "ignores connectionProxyDictionary and always follows http_proxy / https_proxy"
        #endif
    }

    /// The dictionary for `URLSessionConfiguration.connectionProxyDictionary`; nil keeps the
    /// environment's or system's proxy.
    var connectionProxyDictionary: [AnyHashable: Any]? {
        switch kind {
        case .environment:
            return nil
        case .direct:
            return ["HTTPEnable": 0, "HTTPSEnable": 0]
        case .http(let host, let port, let excluding):
            var dictionary: [AnyHashable: Any] = [
                "HTTPEnable": 1, "HTTPProxy": host, "HTTPPort": port,
                "HTTPSEnable": 1, "HTTPSProxy": host, "HTTPSPort": port,
            ]
            if !excluding.isEmpty { dictionary["ExceptionsList"] = excluding }
            return dictionary
        case .socks5(let host, let port, let excluding):
            var dictionary: [AnyHashable: Any] = ["SOCKSEnable": 1, "SOCKSProxy": host, "SOCKSPort": port]
            if !excluding.isEmpty { dictionary["ExceptionsList"] = excluding }
            return dictionary
        }
    }
}
