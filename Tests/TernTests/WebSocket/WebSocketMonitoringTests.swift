import Foundation
import Testing

@testable import Tern

/// A socket to the client's monitors and logger, and to an owner's lifetime: the same events and
/// the same redaction as a request, against the `websockets` package.
@Suite struct WebSocketMonitoringTests {
    typealias Recorder = MonitoringTests.Recorder

    static func client(recorder: Recorder, lines: MonitoringTests.Lines) throws -> Client {
        try WebSocketTests.client {
            $0.monitors = [recorder, RequestLogger(level: .debug, write: lines.add)]
            $0.headers["Authorization"] = "Bearer secret-token-123"
        }
    }

    /// The bytes of each `.progress` of the socket numbered `id` in `direction`.
    static func progress(_ recorder: Recorder, _ id: UInt64, _ direction: TransferProgress.Direction) -> [Int64] {
        recorder.all.filter { $0.requestID == id }.compactMap { event in
            guard case .progress(let progress) = event.kind, progress.direction == direction else { return nil }
            return progress.completedBytes
        }
    }

    @Test func monitorsSeeASocketAsARequestAndTheLoggerRedactsIt() async throws {
        let (recorder, lines) = (Recorder(), MonitoringTests.Lines())
        let socket = try Self.client(recorder: recorder, lines: lines).webSocket(Request<Data>("echo"))
        try await WebSocketTests.within {
            var iterator = socket.messages.makeAsyncIterator()
            try await socket.send("hello")
            #expect(try await iterator.next() == .text("hello"))
            try await socket.send(Data(count: 300))
            #expect(try await iterator.next() == .data(Data(count: 300)))
            socket.close()
            #expect(await socket.ended() == .closed(.normalClosure, reason: ""))
        }
        let id = socket.handle.id
        #expect(await eventually { recorder.names(of: id).last?.hasPrefix("finished") == true })
        #expect(recorder.names(of: id) == ["created", "attempt 1", "response 101", "finished 101 after 1"])
        #expect(Self.progress(recorder, id, .upload) == [5, 305])
        #expect(Self.progress(recorder, id, .download) == [5, 305])
        guard case .finished(let outcome)? = recorder.all.last(where: { $0.requestID == id })?.kind else {
            Issue.record("no finished event")
            return
        }
        #expect(outcome.error == nil && outcome.bytes == 305)
        #expect(recorder.all.first { $0.requestID == id }?.url?.scheme == "ws")
        // The upgrade request is logged like a request's, its credential hidden.
        let logged = lines.all.joined(separator: "\n")
        #expect(logged.contains("→ GET ws://") && logged.contains("/echo"), "\(logged)")
        #expect(logged.contains("← 101"))
        #expect(!logged.contains("secret-token-123"), "\(logged)")
    }

    @Test func aRefusedHandshakeAndACancelEndAsFailures() async throws {
        let (recorder, lines) = (Recorder(), MonitoringTests.Lines())
        let client = try Self.client(recorder: recorder, lines: lines)
        let refused = client.webSocket(Request<Data>("reject"))
        _ = try await WebSocketTests.within { await refused.ended() }
        // The refusal is the upgrade's response, as any request's is.
        #expect(
            await eventually { recorder.names(of: refused.handle.id) == ["created", "attempt 1", "response 403", "finished 0 after 1"] },
            "\(recorder.names(of: refused.handle.id))")
        let cancelled = client.webSocket(Request<Data>("echo"))
        try await WebSocketTests.within { try await cancelled.opened() }
        cancelled.cancel()
        _ = try await WebSocketTests.within { await cancelled.ended() }
        #expect(
            await eventually {
                recorder.names(of: cancelled.handle.id) == ["created", "attempt 1", "response 101", "cancelled", "finished 101 after 1"]
            }, "\(recorder.names(of: cancelled.handle.id))")
        #expect(lines.all.contains { $0.contains("ws://") && $0.contains("cancelled") })
    }

    /// A socket owned by a screen closes when the screen goes, ended as `.ownerReleased`; while
    /// the screen lives it stays open.
    @Test func aSocketOwnedByAScreenEndsWithIt() async throws {
        final class Screen {}
        let client = try WebSocketTests.client()
        var screen: Screen? = Screen()
        let socket = client.webSocket(Request<Data>("echo").owned(by: try #require(screen)))
        try await WebSocketTests.within { try await socket.opened() }
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(socket.ending == nil)
        try await socket.send("still here")
        screen = nil
        let ending = try await WebSocketTests.within { await socket.ended() }
        #expect(ending == .failed(.cancelled(.ownerReleased)))
        #expect(await eventually { client.runningRequests.isEmpty })
        _ = screen
    }

    /// With a tracer, a socket is one span: each upgrade request carries its `traceparent` (as the
    /// `websockets` server received it), continuing the trace it was opened in, and the span ends
    /// once, with the connection's attempt, not one event per message.
    @Test func aTracedSocketSendsItsTraceparentAndEndsItsSpanOnce() async throws {
        let spans = TraceContextTests.Spans()
        let client = try WebSocketTests.client { $0.tracer = TraceContextTracer { spans.add($0) } }
        let incoming = try #require(TraceContext(traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"))
        let socket = TraceContext.$current.withValue(incoming) { client.webSocket(Request<Data>("headers")) }
        let headers = try await WebSocketTests.within { () async throws -> String? in
            var iterator = socket.messages.makeAsyncIterator()
            guard case .text(let json)? = try await iterator.next() else { return nil }
            try await socket.send("echo me")
            #expect(try await iterator.next() == .text("echo me"))
            return json
        }
        let fields = headers.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String] } ?? [:]
        let sent = try #require(fields.first { $0.key.lowercased() == "traceparent" }?.value, "\(fields)")
        #expect(sent.hasPrefix("00-4bf92f3577b34da6a3ce929d0e0e4736-"))
        socket.close()
        _ = try await WebSocketTests.within { await socket.ended() }
        #expect(await eventually { spans.all.count == 1 })
        let span = try #require(spans.all.first)
        #expect(span.context.traceparent == sent && span.parentSpanID == "00f067aa0ba902b7")
        #expect(span.events.map(\.name) == ["attempt"], "\(span.events.map(\.name))")
    }
}
