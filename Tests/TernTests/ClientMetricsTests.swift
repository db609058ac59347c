import Foundation
import Testing
@testable import Tern

/// Client-wide metrics: exact counts after a known workload against httpbin on both transports,
/// the libcurl transport's per-origin queue, the Prometheus rendering and the periodic stream.
@Suite struct ClientMetricsTests {
    @Test(arguments: TransportKind.all)
    func countsAreExactAfterAKnownWorkload(kind: TransportKind) async throws {
        let client = kind.client(try TestServers.httpbin())
        for _ in 0..<10 { _ = try await client.send(Request<JSON>("get")) }
        _ = try await client.send(Request<JSON>("post", method: .post, body: .data(Data(repeating: 7, count: 1000))))
        for _ in 0..<2 { _ = await client.completionResult(Request<Data>("status/503")) }
        let slow = client.send(Request<Data>("delay/5")) { _ in }
        try await Task.sleep(milliseconds: 200)
        slow.cancel()
        // The cancelled exchange's end comes from the transport, a moment later on a busy machine.
        let deadline = Date().addingTimeInterval(10)
        while client.metrics.inFlight > 0, Date() < deadline { try await Task.sleep(milliseconds: 20) }
        let metrics = client.metrics
        #expect(metrics.requestsByOutcome == ["success": 11, "unacceptableStatus": 2, "cancelled": 1])
        #expect(metrics.requestsFinished == 14)
        #expect(metrics.inFlight == 0)
        #expect(metrics.bytesSent == 1000)
        #expect(metrics.bytesReceived > 11 * 100)
        #expect(metrics.latency.count == 14 && metrics.latency.sampleCount == 14)
        #expect(metrics.latency.p50 > 0 && metrics.latency.p50 <= metrics.latency.p90 && metrics.latency.p90 <= metrics.latency.p99)
        if kind == .curl {
            // Every answered exchange says whether it reused its connection; one connection does.
            #expect(metrics.connectionsOpened + metrics.connectionsReused == 13)
            #expect(metrics.connectionsReused >= 10)
        } else {
            #if os(Linux)
            #expect(metrics.connectionsOpened + metrics.connectionsReused == 0, "URLSession on Linux says neither")
            #endif
        }
    }

    #if DEBUG
    /// A GET that is redirected, fails once with a 503 and succeeds on its retry (three
    /// exchanges) takes the client's metrics lock once, when it ends; none with metrics off.
    @Test(arguments: [true, false])
    func aWalkedGetTakesTheClientsMetricsLockOnceOrNever(collectsMetrics: Bool) async throws {
        let client = try Client(baseURL: TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.retryPolicy = RetryPolicy(maxAttempts: 4, baseDelay: 0.05, jitter: 0)
            $0.collectsMetrics = collectsMetrics
        }
        let key = Fixture.uniqueKey("metrics-lock")
        let response = try await client.send(Request<JSON>("redirect", query: ["to": "/flaky?key=\(key)&fail=1"]))
        #expect(response.attempt == 3 && response.redirects.count == 1)
        #expect(client.statistics.lockTakes == (collectsMetrics ? 1 : 0))
        let metrics = client.metrics
        #expect(metrics.requestsFinished == (collectsMetrics ? 1 : 0) && metrics.inFlight == 0)
        #expect((metrics.bytesReceived > 0) == collectsMetrics)
        #if os(Linux)
        // libcurl says whether each of the three exchanges reused its connection.
        if collectsMetrics, client.transport is CurlTransport { #expect(metrics.connectionsOpened + metrics.connectionsReused == 3) }
        #endif
    }
    #endif

    #if os(Linux)
    @Test func theLibcurlTransportsQueuePerOriginIsCounted() async throws {
        let client = TransportKind.curl.client(try TestServers.httpbin()) {
            $0.transportSettings.maximumConnectionsPerHost = 1
            $0.timeout = 30
        }
        let handles = (0..<5).map { _ in client.send(Request<Data>("delay/10")) { _ in } }
        defer { handles.forEach { $0.cancel() } }
        // One exchange on the connection, four waiting for it (on a loaded machine the loop may
        // take a moment to admit them all).
        var metrics = client.metrics
        let deadline = Date().addingTimeInterval(8)
        while metrics.queuedByOrigin.values.reduce(0, +) < 4, Date() < deadline {
            try await Task.sleep(milliseconds: 20)
            metrics = client.metrics
        }
        #expect(metrics.inFlight == 5, "every exchange was handed to the transport")
        #expect(metrics.queuedByOrigin.values.reduce(0, +) == 4, "\(metrics.queuedByOrigin)")
        #expect(metrics.queuedByOrigin.keys.allSatisfy { $0.hasPrefix("http://127.0.0.1:") })
    }
    #endif

    @Test func thePrometheusTextFollowsTheExpositionFormat() {
        var metrics = ClientMetrics(client: "weather", date: Date())
        metrics.inFlight = 2
        metrics.queuedByOrigin = ["http://a\"b\\c:80": 3]
        metrics.requestsByOutcome = ["success": 5, "timedOut": 1]
        metrics.bytesSent = 10
        metrics.latency.p50 = 0.25
        metrics.latency.count = 6
        metrics.latency.totalSeconds = 1.5
        let lines = metrics.prometheusText().split(separator: "\n").map(String.init)
        #expect(lines.contains("# TYPE tern_requests_in_flight gauge"))
        #expect(lines.contains(#"tern_requests_in_flight{client="weather"} 2"#))
        #expect(lines.contains(#"tern_requests_queued{client="weather",origin="http://a\"b\\c:80"} 3"#))
        #expect(lines.contains(#"tern_requests_total{client="weather",outcome="success"} 5"#))
        #expect(lines.contains(#"tern_requests_total{client="weather",outcome="timedOut"} 1"#))
        #expect(lines.contains(#"tern_sent_bytes_total{client="weather"} 10"#))
        #expect(lines.contains(#"tern_request_duration_seconds{client="weather",quantile="0.5"} 0.250000"#))
        #expect(lines.contains(#"tern_request_duration_seconds_sum{client="weather"} 1.500000"#))
        #expect(lines.contains(#"tern_request_duration_seconds_count{client="weather"} 6"#))
        // Every sample line is `name{labels} value`, every family has HELP and TYPE.
        for line in lines where !line.hasPrefix("#") {
            #expect(line.hasPrefix("tern_") && Double(line.split(separator: " ").last ?? "") != nil, "\(line)")
        }
        #expect(lines.filter { $0.hasPrefix("# TYPE") }.count == lines.filter { $0.hasPrefix("# HELP") }.count)
        #expect(metrics.prometheusText(prefix: "api").contains(#"api_requests_in_flight{client="weather"} 2"#))
    }

    /// Two clients in one exposition: each family once, a series per client, told apart by name
    /// (the configuration's, else the base URL's host).
    @Test func twoClientsShareOneExpositionWithoutOverwritingEachOther() throws {
        let payments = Client(baseURL: "https://pay.example.com") { $0.name = "payments" }
        let search = Client(baseURL: "https://search.example.com")
        #expect(payments.metrics.client == "payments" && search.metrics.client == "search.example.com")
        var first = payments.metrics
        first.inFlight = 1
        var second = search.metrics
        second.inFlight = 3
        let lines = ClientMetrics.prometheusText([first, second]).split(separator: "\n").map(String.init)
        #expect(lines.filter { $0 == "# TYPE tern_requests_in_flight gauge" }.count == 1)
        #expect(lines.contains(#"tern_requests_in_flight{client="payments"} 1"#))
        #expect(lines.contains(#"tern_requests_in_flight{client="search.example.com"} 3"#))
        #expect(lines.filter { $0.hasPrefix("# TYPE") }.count == 8)
    }

    @Test func updatesArriveEveryInterval() async throws {
        let client = try Client(baseURL: TestServers.httpbin()) { $0.callbackQueue = .immediate }
        var snapshots: [ClientMetrics] = []
        for await snapshot in client.metricsUpdates(every: 0.02) {
            snapshots.append(snapshot)
            if snapshots.count == 1 { _ = try await client.send(Request<JSON>("get")) }
            // A snapshot taken while the request ran may come first; a later one counts it.
            if snapshot.requestsFinished == 1 || snapshots.count == 500 { break }
        }
        #expect(snapshots.first?.requestsFinished == 0)
        #expect(snapshots.last?.requestsFinished == 1)
        #expect(snapshots.map(\.date) == snapshots.map(\.date).sorted())
    }
}
