import Foundation
import Testing
@testable import Tern

/// W3C Trace Context: `traceparent` / `tracestate` as httpbin (the independent server) receives
/// them, on both transports; spans with their attempts, redirects and retries; parsing.
@Suite struct TraceContextTests {
    /// Finished spans, in the order they ended.
    final class Spans: Sendable {
        private let spans = Locked<[FinishedSpan]>([])
        func add(_ span: FinishedSpan) { spans.withLock { $0.append(span) } }
        var all: [FinishedSpan] { spans.withLock { $0 } }
    }

    /// Version 00, lowercase ids that are not all zero, flags 00 or 01: what the parser accepts
    /// and writes back unchanged.
    private static func isWellFormed(_ value: String) -> Bool {
        value.count == 55 && TraceContext(traceparent: value)?.traceparent == value
    }

    @Test(arguments: TransportKind.all)
    func everyRequestSendsItsSpansTraceparent(kind: TransportKind) async throws {
        let spans = Spans()
        let client = kind.client(try TestServers.httpbin()) { $0.tracer = TraceContextTracer { spans.add($0) } }
        let json = try await client.send(Request<JSON>("headers")).json
        let sent = try #require(json["headers"]?["Traceparent"]?.string)
        #expect(Self.isWellFormed(sent), "\(sent)")
        #expect(json["headers"]?["Tracestate"] == nil)
        let span = try #require(spans.all.first)
        #expect(span.context.traceparent == sent)
        #expect(span.parentSpanID == nil && span.statusCode == 200 && span.name == "GET")
        #expect(span.events.map(\.name) == ["attempt"])
    }

    @Test(arguments: TransportKind.all)
    func aRequestInsideATraceContinuesIt(kind: TransportKind) async throws {
        let spans = Spans()
        let client = kind.client(try TestServers.httpbin()) { $0.tracer = TraceContextTracer { spans.add($0) } }
        let incoming = try #require(
            TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", tracestate: "vendor=abc"))
        let json = try await TraceContext.$current.withValue(incoming) {
            try await client.send(Request<JSON>("headers")).json
        }
        let sent = try #require(json["headers"]?["Traceparent"]?.string.flatMap { TraceContext(traceparent: $0) })
        #expect(sent.traceID == incoming.traceID)
        #expect(sent.spanID != incoming.spanID)
        #expect(sent.isSampled)
        #expect(json["headers"]?["Tracestate"]?.string == "vendor=abc")
        #expect(spans.all.first?.parentSpanID == incoming.spanID)
    }

    @Test func redirectsAndRetriesAreEventsOfOneSpanAndEveryAttemptSendsIt() async throws {
        let spans = Spans()
        let key = "trace-\(UUID().uuidString)"
        let client = try Client(baseURL: TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.retryPolicy = .exponential(maxAttempts: 3, baseDelay: 0.01)
            $0.tracer = TraceContextTracer { spans.add($0) }
        }
        let response = try await client.send(
            Request<JSON>("redirect", query: ["status": 302, "to": "/flaky?key=\(key)&fail=1"]))
        #expect(response.json["n"]?.int == 2)
        let span = try #require(spans.all.first)
        #expect(spans.all.count == 1, "one span for the request")
        #expect(span.events.map(\.name) == ["attempt", "redirect", "attempt", "retry", "attempt"])
        #expect(span.statusCode == 200)
    }

    @Test func aCancelledRequestEndsItsSpanOnce() async throws {
        let spans = Spans()
        let client = try Client(baseURL: TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.tracer = TraceContextTracer { spans.add($0) }
        }
        let handle = client.send(Request<JSON>("stall", query: ["seconds": 30])) { _ in }
        try await Task.sleep(milliseconds: 200)
        handle.cancel()
        let deadline = Date().addingTimeInterval(10)
        while spans.all.isEmpty, Date() < deadline { try await Task.sleep(milliseconds: 20) }
        try await Task.sleep(milliseconds: 200)  // a second end would have come by now
        #expect(spans.all.count == 1)
        #expect(spans.all.first?.error?.isCancelled == true)
    }

    @Test(arguments: TransportKind.all)
    func withoutATracerNoTraceHeaderIsSent(kind: TransportKind) async throws {
        let json = try await kind.client(try TestServers.httpbin()).send(Request<JSON>("headers")).json
        #expect(json["headers"]?["Traceparent"] == nil)
    }

    @Test func traceparentIsParsedAsTheRecommendationSays() {
        let valid = TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
        #expect(valid?.isSampled == false && valid?.traceparent == "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")
        // A later version may add fields; version 00 may not.
        #expect(TraceContext(traceparent: "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra") != nil)
        for bad in [
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra",  // 00 with more fields
            "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",  // version ff
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01",  // zero trace id
            "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",  // zero span id
            "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",  // upper case
            "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",  // short trace id
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",  // short flags
            "garbage", "",
        ] {
            #expect(TraceContext(traceparent: bad) == nil, "\(bad)")
        }
        let fresh = TraceContext.newTrace()
        #expect(Self.isWellFormed(fresh.traceparent))
        #expect(fresh.child().traceID == fresh.traceID && fresh.child().spanID != fresh.spanID)
    }
}
