import Foundation

/// Where the libcurl transport connects for a host instead of asking DNS: a fixed address
/// (`resolve(_:to:)`, a DNS override), or another host and port (`connect(_:port:to:port:)`,
/// curl's `--connect-to`). The request keeps its URL's name in `Host`, cookies, TLS's server name
/// and the certificate check; only the connection goes elsewhere.
/// ```swift
/// var overrides = HostOverrides()
/// overrides.resolve("api.example.com", to: "10.0.0.7")
/// overrides.connect("search.example.com", port: 443, to: "search-canary.internal", port: 8443)
/// ```
/// URLSession has no such setting: a client on it with overrides is created with
/// `Client.configurationError` set, and its requests fail with it rather than reach the host DNS
/// names. Thread safety: a value type, safe to share.
public struct HostOverrides: Sendable, Hashable {
    /// One override: connections for `host` (on `port`, or any port when nil) go to
    /// `targetHost` (on `targetPort`, or the same port when nil).
    public struct Rule: Sendable, Hashable {
        public var host: String
        public var port: Int?
        public var targetHost: String
        public var targetPort: Int?

        /// Creates a rule; see `HostOverrides.connect(_:port:to:port:)`.
        public init(host: String, port: Int? = nil, targetHost: String, targetPort: Int? = nil) {
            self.host = host
            self.port = port
            self.targetHost = targetHost
            self.targetPort = targetPort
        }
    }

    /// The overrides, the first matching one applying.
    public var rules: [Rule] = []

    /// No overrides: every host is found through DNS.
    public init() {}

    /// Connects to `address` (an IPv4 or IPv6 address, or another name) for `host`, on any port.
    public mutating func resolve(_ host: String, to address: String) {
        rules.append(Rule(host: host, targetHost: address))
    }

    /// Connects to `targetHost:targetPort` for `host:port`; a nil `port` matches any port, a nil
    /// `targetPort` keeps the request's port.
    public mutating func connect(_ host: String, port: Int? = nil, to targetHost: String, port targetPort: Int? = nil) {
        rules.append(Rule(host: host, port: port, targetHost: targetHost, targetPort: targetPort))
    }

    /// Whether there are no overrides.
    public var isEmpty: Bool { rules.isEmpty }

    /// Why these overrides cannot be used (a name with a space or a colon, a port outside
    /// 1...65535); nil when they can.
    var problem: String? {
        for rule in rules {
            for name in [rule.host, rule.targetHost] where !Self.isUsableName(name) {
                return "hostOverrides: \"\(name)\" is not a host name or address"
            }
            for port in [rule.port, rule.targetPort].compactMap({ $0 }) where !(1...65_535).contains(port) {
                return "hostOverrides: port \(port) is outside 1...65535"
            }
        }
        return nil
    }

    /// Why `URLSessionTransport` cannot honour them; nil when there are none.
    var unsupportedByURLSession: String? {
        isEmpty ? nil : "hostOverrides need the libcurl transport: URLSession has no setting to connect elsewhere for a host"
    }

    /// The rules as `CURLOPT_CONNECT_TO` lines: `HOST:PORT:CONNECT-TO-HOST:CONNECT-TO-PORT`, an
    /// empty field meaning any (or the same) port, IPv6 addresses in brackets.
    var curlLines: [String] {
        rules.map { rule in
            "\(rule.host.lowercased()):\(rule.port.map(String.init) ?? ""):\(Self.bracketed(rule.targetHost)):"
                + (rule.targetPort.map(String.init) ?? "")
        }
    }

    private static func isUsableName(_ name: String) -> Bool {
        let bare = name.hasPrefix("[") && name.hasSuffix("]") ? String(name.dropFirst().dropLast()) : name
        guard !bare.isEmpty, !bare.contains(where: { $0.isWhitespace || $0 == "/" || $0 == "@" }) else { return false }
        // A colon only in an IPv6 address.
        return !bare.contains(":") || bare.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
    }

    private static func bracketed(_ host: String) -> String {
        host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
    }
}
