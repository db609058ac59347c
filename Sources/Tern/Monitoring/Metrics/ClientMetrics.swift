import Foundation

/// A client's totals since it was created, as one consistent snapshot (`Client.metrics`, or every
/// few seconds from `Client.metricsUpdates(every:)`): to watch a service's outgoing traffic, or to
/// serve as is to Prometheus (`prometheusText()`).
/// Thread safety: a value type, safe to share.
public struct ClientMetrics: Sendable, Equatable {
    /// The client's name (`ClientConfiguration.name`): the `client` label of every series.
    public var client = "tern"
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
    /// Exchanges that opened a new connection. Each exchange on the network counts once, here or
    /// in `connectionsReused`, where the transport says which: libcurl always, URLSession on
    /// Apple platforms; URLSession on Linux says neither. An exchange cancelled or failed before
    /// its answer counts in neither; a cache hit and a request that joined a shared exchange make
    /// no exchange of their own.
    public var connectionsOpened = 0
    /// Exchanges that reused a connection (see `connectionsOpened`).
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

    /// The snapshot in the Prometheus text exposition format (version 0.0.4): every series named
    /// `prefix_…` and labelled `client="…"`. Serve it as is, with
    /// `Content-Type: text/plain; version=0.0.4`; for several clients, use
    /// `prometheusText(_:prefix:)`, which writes each family once.
    public func prometheusText(prefix: String = "tern") -> String {
        Self.prometheusText([self], prefix: prefix)
    }

    /// Several clients' snapshots as one exposition: each family once, with a series per client
    /// (told apart by `client`; give clients distinct `ClientConfiguration.name`s). A service's own
    /// metrics go beside it under another prefix.
    public static func prometheusText(_ snapshots: [ClientMetrics], prefix: String = "tern") -> String {
        var text = ""
        func family(_ name: String, _ type: String, _ help: String, _ samples: (ClientMetrics) -> [(labels: String, value: String)]) {
            text += "# HELP \(prefix)_\(name) \(help)\n# TYPE \(prefix)_\(name) \(type)\n"
            for snapshot in snapshots {
                let client = "client=\"\(escaped(snapshot.client))\""
                for sample in samples(snapshot) {
                    let labels = sample.labels.isEmpty ? client : client + "," + sample.labels
                    text += "\(prefix)_\(name){\(labels)} \(sample.value)\n"
                }
            }
        }
        family("requests_in_flight", "gauge", "Exchanges on the network now.") { [("", String($0.inFlight))] }
        family("requests_queued", "gauge", "Exchanges waiting for a connection, by origin.") {
            $0.queuedByOrigin.sorted { $0.key < $1.key }.map { ("origin=\"\(escaped($0.key))\"", String($0.value)) }
        }
        family("requests_total", "counter", "Requests that ended, by outcome.") {
            $0.requestsByOutcome.sorted { $0.key < $1.key }.map { ("outcome=\"\(escaped($0.key))\"", String($0.value)) }
        }
        family("connections_opened_total", "counter", "Exchanges that opened a connection.") { [("", String($0.connectionsOpened))] }
        family("connections_reused_total", "counter", "Exchanges that reused a connection.") { [("", String($0.connectionsReused))] }
        family("sent_bytes_total", "counter", "Request body bytes sent.") { [("", String($0.bytesSent))] }
        family("received_bytes_total", "counter", "Response body bytes received.") { [("", String($0.bytesReceived))] }
        family("request_duration_seconds", "summary", "Seconds from send to result.") { snapshot in
            [
                ("quantile=\"0.5\"", number(snapshot.latency.p50)), ("quantile=\"0.9\"", number(snapshot.latency.p90)),
                ("quantile=\"0.99\"", number(snapshot.latency.p99)),
            ]
        }
        for snapshot in snapshots {
            let client = "{client=\"\(escaped(snapshot.client))\"}"
            text += "\(prefix)_request_duration_seconds_sum\(client) \(number(snapshot.latency.totalSeconds))\n"
            text += "\(prefix)_request_duration_seconds_count\(client) \(snapshot.latency.count)\n"
        }
        return text
    }

    /// A label value with `\`, `"` and line feeds escaped.
    private static func escaped(_ value: String) -> String {
        value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n")
    }

    private static func number(_ value: Double) -> String { String(format: "%.6f", value) }
}
