import Foundation
import Tern

// The samples of the articles on uploads and on the libcurl transport's network settings, compiled.

func compressedUploads(api: Client, logLines: Data) async throws -> JSON {
    var upload = Request<JSON>("logs", method: .post, body: .data(logLines))
    upload.compression = .gzip  // Content-Encoding: gzip
    let analytics = APIGroup("analytics", baseURL: "https://collect.example.com") {
        $0.requestCompression = .deflate  // every request of the group
    }
    var event = Request<JSON>("events", method: .post, body: .json(["name": "opened"]))
    event.group = analytics
    _ = try await api.send(event)
    return try await api.send(upload).value
}

/// Makes one page of a report.
typealias Page = @Sendable (Int) async throws -> Data

func streamedUploads(api: Client, export: AsyncStream<Data>, page: @escaping Page) async throws {
    // a sequence, read once: chunked, since its length is not known
    let imports = Request<JSON>("imports", method: .post, body: .stream(export))
    _ = try await api.send(imports)
    // a producer, called again for each attempt: retries and 307/308 redirects resend it
    let report = RequestBody.stream(contentType: "text/csv") { writer in
        for number in 1...40 { try await writer.write(try await page(number)) }
    }
    _ = try await api.send(Request<JSON>("reports", method: .put, body: report))
}

func networkSettings() -> Client {
    Client(baseURL: "https://api.example.com") {
        // the proxy resolves names (socks5h)
        $0.transportSettings.proxy = .socks5(host: "127.0.0.1", port: 1080)
        $0.transportSettings.hostOverrides.resolve("api.example.com", to: "10.0.0.7")
        $0.transportSettings.hostOverrides.connect("search.example.com", to: "canary.internal")
    }
}

// The samples of the Server-Side Use article, compiled.

// One client for the whole service: its connections and limits are shared by every handler.
let inventory = Client(baseURL: "http://inventory.internal:8080") {
    $0.timeout = 2  // no sign of life for 2 s: .timedOut
    $0.deadline = 5  // every attempt, redirect and retry together
    $0.retryPolicy = .exponential(maxAttempts: 2, baseDelay: 0.05)
    $0.transportSettings.maximumConnectionsPerHost = 32  // more wait in Tern's queue
    $0.tracer = TraceContextTracer { span in print(span) }
}

/// A handler that calls another service inside the caller's trace and time budget.
func stockLevel(sku: String, traceparent: String?, budget: TimeInterval) async throws -> Int {
    var request = Request<JSON>("stock/\(sku)")
    request.deadline = budget  // what is left of the caller's own deadline
    let incoming = traceparent.flatMap { TraceContext(traceparent: $0) }
    let reply = try await TraceContext.$current.withValue(incoming) {
        try await inventory.send(request)
    }
    return reply.json["level"]?.int ?? 0
}

/// A stand-in for a tracing library's span type (swift-distributed-tracing, OpenTelemetry).
protocol ExternalSpan: Sendable {
    var traceID: String { get }
    var spanID: String { get }
    func addEvent(_ name: String)
    func finish(error: (any Error)?)
}

/// Adapts a tracing library to Tern: start its span, give Tern its ids, forward what happens.
struct LibraryTracer: RequestTracer {
    let startSpan: @Sendable (_ name: String, _ parent: TraceContext?) -> any ExternalSpan

    func startSpan(for request: TracedRequest) -> any RequestSpan {
        Adapted(span: startSpan(request.spanName, request.parent))
    }

    struct Adapted: RequestSpan {
        let span: any ExternalSpan
        var context: TraceContext { TraceContext(traceID: span.traceID, spanID: span.spanID) }
        func record(_ event: RequestEvent.Kind, at date: Date) { span.addEvent("\(event)") }
        func end(_ outcome: RequestOutcome) { span.finish(error: outcome.error) }
    }
}

/// The body of a `/metrics` endpoint: the client's totals for Prometheus to scrape.
func metricsEndpoint(client: Client) -> (contentType: String, body: String) {
    ("text/plain; version=0.0.4", client.metrics.prometheusText())
}

/// Two clients of one service in one scrape: `client="payments"` and `client="search"`.
func metricsEndpoint(payments: Client, search: Client) -> String {
    ClientMetrics.prometheusText([payments.metrics, search.metrics], prefix: "tern")
}

/// Names a client in its metrics.
func paymentsClient() -> Client {
    Client(baseURL: "https://pay.internal") { $0.name = "payments" }
}

/// Logs the client's traffic every ten seconds.
func watchTraffic(client: Client) async {
    for await snapshot in client.metricsUpdates(every: 10) {
        print(snapshot.inFlight, snapshot.latency.p99, snapshot.requestsByOutcome)
    }
}
