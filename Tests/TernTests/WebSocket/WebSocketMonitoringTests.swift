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
        #expect(await eventually { recorder.names(of: refused.handle.id) == ["created", "attempt 1", "finished 0 after 1"] })
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
}
