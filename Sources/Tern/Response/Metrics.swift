import Foundation

/// How the exchange that produced a response went: where its time went, whether it reused a
/// connection, which HTTP version it spoke and how many bytes it moved.
///
/// Times are seconds from the start of that exchange (the final one: after followed redirects
/// and retries, the one that answered), each one counting everything before it, as libcurl's
/// do: `connect` includes `nameLookup`, `firstByte` includes both. `redirectTime` adds up the
/// exchanges of the redirects followed before it.
///
/// Who fills what (`measuredBy`):
/// - `.transport` — the libcurl transport measures every field from `curl_easy_getinfo`.
/// - `.tern` — transports that report nothing (`URLSessionTransport`, whose Linux implementation
///   hands out no per-connection timings; stubs; custom transports): Tern fills `firstByte`,
///   `total`, `bytesSent` and `bytesReceived` from its own clock and counts, and leaves
///   `nameLookup`, `connect`, `secureConnect`, `reusedConnection` and `httpVersion` nil.
/// Thread safety: a value type, safe to share.
public struct Metrics: Sendable, Hashable {
    /// Who measured the exchange.
    public enum Source: Sendable, Hashable {
        /// The transport, with connection-level detail.
        case transport
        /// Tern's own clock and byte counts; connection-level fields are nil.
        case tern
    }

    /// Who measured the exchange.
    public var measuredBy: Source
    /// When the host name was resolved; nil when not measured.
    public var nameLookup: TimeInterval?
    /// When the TCP connection was up (near 0 for a reused one); nil when not measured.
    public var connect: TimeInterval?
    /// When the TLS handshake ended; nil for plain HTTP or when not measured.
    public var secureConnect: TimeInterval?
    /// When the first byte of the response arrived.
    public var firstByte: TimeInterval
    /// When the exchange ended.
    public var total: TimeInterval
    /// Seconds the followed redirects' exchanges took before this one; 0 without redirects.
    public var redirectTime: TimeInterval
    /// Whether the exchange ran on a connection opened earlier; nil when not measured.
    public var reusedConnection: Bool?
    /// "HTTP/1.0", "HTTP/1.1", "HTTP/2" or "HTTP/3"; nil when not measured.
    public var httpVersion: String?
    /// Bytes of the request body sent.
    public var bytesSent: Int64
    /// Bytes of the response body received (after decompression).
    public var bytesReceived: Int64

    /// Creates metrics; transports report them with `TransportEvent.metrics`.
    public init(
        measuredBy: Source, nameLookup: TimeInterval? = nil, connect: TimeInterval? = nil, secureConnect: TimeInterval? = nil,
        firstByte: TimeInterval, total: TimeInterval, redirectTime: TimeInterval = 0, reusedConnection: Bool? = nil,
        httpVersion: String? = nil, bytesSent: Int64, bytesReceived: Int64
    ) {
        self.measuredBy = measuredBy
        self.nameLookup = nameLookup
        self.connect = connect
        self.secureConnect = secureConnect
        self.firstByte = firstByte
        self.total = total
        self.redirectTime = redirectTime
        self.reusedConnection = reusedConnection
        self.httpVersion = httpVersion
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
    }
}

extension Metrics: CustomStringConvertible {
    /// `HTTP/1.1 reused, first byte 1.2 ms, total 1.4 ms, 0 B up, 1024 B down`.
    public var description: String {
        func ms(_ seconds: TimeInterval) -> String { String(format: "%.1f ms", seconds * 1000) }
        var parts: [String] = []
        if let httpVersion { parts.append(httpVersion + (reusedConnection == true ? " reused" : reusedConnection == false ? " new" : "")) }
        if let nameLookup { parts.append("dns \(ms(nameLookup))") }
        if let connect { parts.append("connect \(ms(connect))") }
        if let secureConnect { parts.append("tls \(ms(secureConnect))") }
        parts.append("first byte \(ms(firstByte))")
        parts.append("total \(ms(total))")
        if redirectTime > 0 { parts.append("redirects \(ms(redirectTime))") }
        parts.append("\(bytesSent) B up, \(bytesReceived) B down")
        return parts.joined(separator: ", ")
    }
}

/// Tern's own timestamps and counts of one exchange, on the monotonic clock: the fallback for
/// transports that report no `Metrics`.
/// Thread safety: a value type; each attempt's copy is touched by its serial event stream only.
struct ExchangeClock: Sendable {
    let start = DispatchTime.now().uptimeNanoseconds
    var head: UInt64 = 0
    var received: Int64 = 0
    /// What the transport reported, if anything.
    var reported: Metrics?

    /// The metrics of the exchange that just ended, `bytesSent` being its body's size.
    func metrics(bytesSent: Int64) -> Metrics {
        if let reported { return reported }
        let now = DispatchTime.now().uptimeNanoseconds
        func seconds(_ time: UInt64) -> TimeInterval { Double(time &- start) / 1e9 }
        return Metrics(
            measuredBy: .tern, firstByte: seconds(head == 0 ? now : head), total: seconds(now),
            bytesSent: bytesSent, bytesReceived: received)
    }
}
