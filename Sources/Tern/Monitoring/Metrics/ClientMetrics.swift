import Foundation

/// A client's totals since it was created, as one consistent snapshot (`Client.metrics`, or every
/// few seconds from `Client.metricsUpdates(every:)`): to watch a service's outgoing traffic, or to
/// serve as is to Prometheus (`prometheusText()`).
/// Thread safety: a value type, safe to share.
public struct ClientMetrics: Sendable, Equatable {
    /// When it was taken.
    public var date: Date
    /// Exchanges on the network now (attempts sent, not yet answered or failed).
    public var inFlight = 0
    /// Exchanges waiting for a connection to their origin, by origin (`scheme://host:port`):
    /// the libcurl transport's per-origin queue (`TransportSettings.maximumConnectionsPerHost`);
    /// empty on URLSession, which does not say.
    public var queuedByOrigin: [String: Int] = [:]
    /// Requests that ended, by outcome: `success`, or the failure's kind (`transport`,
    /// `timedOut`, `unacceptableStatus`, `cancelled` …, as `TernError`'s cases are named).
    public var requestsByOutcome: [String: Int] = [:]
    /// Exchanges that opened a new connection (where the transport says: libcurl always,
    /// URLSession on Apple platforms).
    public var connectionsOpened = 0
    /// Exchanges that reused a connection (where the transport says).
    public var connectionsReused = 0
    /// Request body bytes sent by every exchange (a redirect's and a retry's included).
    public var bytesSent: Int64 = 0
    /// Response body bytes received by every exchange.
    public var bytesReceived: Int64 = 0
    /// Seconds from `send` to the result, of the latest requests (up to 1,024).
    public var latency = Latency()

    /// Requests that ended, however they ended.
    public var requestsFinished: Int { requestsByOutcome.values.reduce(0, +) }

    /// Percentiles of recent request durations, in seconds (0 when none ended yet).
    public struct Latency: Sendable, Equatable {
        /// The median.
        public var p50: TimeInterval = 0
        /// The 90th percentile.
        public var p90: TimeInterval = 0
        /// The 99th percentile.
        public var p99: TimeInterval = 0
        /// How many recent requests the percentiles are over (at most 1,024).
        public var sampleCount = 0
        /// The sum of every request's duration since the client was created.
        public var totalSeconds: TimeInterval = 0
        /// How many requests ended since the client was created.
        public var count = 0
    }

    /// The snapshot in the Prometheus text exposition format (version 0.0.4), every name under
    /// `prefix`: serve it as is, with `Content-Type: text/plain; version=0.0.4`.
    public func prometheusText(prefix: String = "tern") -> String {
        var text = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: [(labels: String, value: String)]) {
            text += "# HELP \(prefix)_\(name) \(help)\n# TYPE \(prefix)_\(name) \(type)\n"
            for sample in samples { text += "\(prefix)_\(name)\(sample.labels) \(sample.value)\n" }
        }
        family("requests_in_flight", "gauge", "Exchanges on the network now.", [("", String(inFlight))])
        family(
            "requests_queued", "gauge", "Exchanges waiting for a connection, by origin.",
            queuedByOrigin.sorted { $0.key < $1.key }.map { ("{origin=\"\(Self.escaped($0.key))\"}", String($0.value)) })
        family(
            "requests_total", "counter", "Requests that ended, by outcome.",
            requestsByOutcome.sorted { $0.key < $1.key }.map { ("{outcome=\"\(Self.escaped($0.key))\"}", String($0.value)) })
        family("connections_opened_total", "counter", "Exchanges that opened a connection.", [("", String(connectionsOpened))])
        family("connections_reused_total", "counter", "Exchanges that reused a connection.", [("", String(connectionsReused))])
        family("sent_bytes_total", "counter", "Request body bytes sent.", [("", String(bytesSent))])
        family("received_bytes_total", "counter", "Response body bytes received.", [("", String(bytesReceived))])
        family(
            "request_duration_seconds", "summary", "Seconds from send to result.",
            [
                ("{quantile=\"0.5\"}", Self.number(latency.p50)), ("{quantile=\"0.9\"}", Self.number(latency.p90)),
                ("{quantile=\"0.99\"}", Self.number(latency.p99)),
            ])
        text += "\(prefix)_request_duration_seconds_sum \(Self.number(latency.totalSeconds))\n"
        text += "\(prefix)_request_duration_seconds_count \(latency.count)\n"
        return text
    }

    /// A label value with `\`, `"` and line feeds escaped.
    private static func escaped(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    private static func number(_ value: Double) -> String { String(format: "%.6f", value) }
}
