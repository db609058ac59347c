import Foundation
import Testing

@testable import Tern

/// WebSockets against an independent implementation, the `websockets` package: the handshake,
/// messages both ways in every size form, fragments, pings, the close handshake from either side,
/// refusals, Tern's lifecycle (cancel by tag, one ending) and the limits.
@Suite struct WebSocketTests {
    static func client(_ configure: (inout ClientConfiguration) -> Void = { _ in }) throws -> Client {
        try Client(baseURL: TestServers.webSocket().replacingOccurrences(of: "ws://", with: "http://"), configure: configure)
    }

    @discardableResult
    static func within<T: Sendable>(_ seconds: Double = 10, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw TernError.timedOut(after: seconds) }
            return value
        }
    }

    @Test func messagesEchoBothWaysInEverySizeForm() async throws {
        let socket = try Self.client().webSocket(Request<Data>("echo"))
        try await Self.within(20) {
            try await socket.opened()
            var iterator = socket.messages.makeAsyncIterator()
            // 7-bit, 16-bit and 64-bit lengths; a message larger than a fragment goes out in pieces.
            for size in [0, 125, 126, 65_535, 65_536, WebSocketConnection.fragmentSize + 3] {
                let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0) })
                try await socket.send(data)
                #expect(try await iterator.next() == .data(data), "\(size) bytes")
            }
            try await socket.send("北京 🙂 κόσμε")
            #expect(try await iterator.next() == .text("北京 🙂 κόσμε"))
            try await socket.ping()
            socket.close(.normalClosure, reason: "done")
            #expect(try await iterator.next() == nil)
        }
        #expect(await socket.ended() == .closed(.normalClosure, reason: "done"))
    }

    @Test func theServersCloseEndsTheSocketWithItsCodeAndReason() async throws {
        let socket = try Self.client().webSocket(Request<Data>("close", query: ["code": 4001, "reason": "bye now"]))
        let ending = try await Self.within { await socket.ended() }
        #expect(ending == .closed(WebSocketCloseCode(rawValue: 4001), reason: "bye now"))
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == nil)
        await #expect(throws: TernError.self) { try await socket.send("late") }
    }

    @Test func aRefusedHandshakeIsTheStatusWithItsBody() async throws {
        let socket = try Self.client().webSocket(Request<Data>("reject"))
        do {
            try await Self.within { try await socket.opened() }
            Issue.record("the handshake was accepted")
        } catch let error as TernError {
            guard case .unacceptableStatus(let code, let body, _, _) = error else {
                Issue.record("expected .unacceptableStatus, got \(error)")
                return
            }
            #expect(code == 403)
            #expect(String(decoding: body, as: UTF8.self).contains("no sockets for you"))
        }
        guard case .failed(.unacceptableStatus(403, _, _, _)) = await socket.ended() else {
            Issue.record("ended as \(String(describing: socket.ending))")
            return
        }
    }

    @Test func subprotocolsHeadersAndTheBaseURLApply() async throws {
        let client = try Self.client { $0.headers["X-Client"] = "tern" }
        var request = Request<Data>("headers", headers: ["Authorization": "Bearer t"])
        request.tags = ["live"]
        let socket = client.webSocket(request, options: WebSocketOptions(protocols: ["v3", "chat"]))
        try await Self.within {
            #expect(try await socket.opened() == "chat")
            var iterator = socket.messages.makeAsyncIterator()
            guard case .text(let json)? = try await iterator.next() else { throw TernError.cacheMiss(url: nil) }
            let headers = try JSON(data: Data(json.utf8))
            #expect(headers["Authorization"]?.string == "Bearer t" && headers["X-Client"]?.string == "tern")
            #expect(headers["Sec-WebSocket-Protocol"]?.string == "v3, chat")
        }
        #expect(socket.subprotocol == "chat")
        #expect(socket.handle.url?.scheme == "ws")
        // A socket is a request: cancel(tag:) ends it, once, with the cancellation.
        #expect(client.runningRequests.count == 1)
        #expect(client.cancel(tag: "live") == 1)
        let ending = try await Self.within { await socket.ended() }
        #expect(ending == .failed(.cancelled(.explicit)))
        #expect(try await Self.within { await eventually { client.runningRequests.isEmpty } })
    }

    @Test func aMessageOverTheLimitClosesWith1009() async throws {
        let socket = try Self.client().webSocket(
            Request<Data>("push", query: ["n": 1, "size": 2_000]),
            options: WebSocketOptions(maximumMessageSize: 1_000))
        let ending = try await Self.within { await socket.ended() }
        guard case .failed(.webSocketFailed(let code, _)) = ending else {
            Issue.record("ended as \(ending)")
            return
        }
        #expect(code == .messageTooBig)
    }

    @Test func aMissingPongFailsTheSocketAsTimedOut() async throws {
        // The reference server answers pings itself; a server that stops reading is the fixture's.
        let socket = try Self.client().webSocket(Request<Data>("echo"), options: WebSocketOptions(pingInterval: 0.2, pongTimeout: 1))
        try await Self.within { try await socket.opened() }
        try await Task.sleep(nanoseconds: 700_000_000)  // three heartbeats, each answered
        #expect(socket.ending == nil)
        socket.close()
        #expect(try await Self.within { await socket.ended() } == .closed(.normalClosure, reason: ""))
    }

    @Test func pushedMessagesArriveInOrderAndASlowReaderLosesNothing() async throws {
        let socket = try Self.client().webSocket(
            Request<Data>("push", query: ["n": 200, "size": 10_000]),
            options: WebSocketOptions(receiveBufferSize: 50_000))
        try await Self.within(30) {
            var iterator = socket.messages.makeAsyncIterator()
            for index in 0..<200 {
                #expect(try await iterator.next() == .text(String(repeating: String(index % 10), count: 10_000)))
                if index % 50 == 0 { try await Task.sleep(nanoseconds: 50_000_000) }
            }
        }
        socket.close()
        _ = try await Self.within { await socket.ended() }
    }

    @Test func aServerThatIsNotThereFailsAsTransport() async throws {
        let client = Client(baseURL: "http://127.0.0.1:9")
        let socket = client.webSocket(Request<Data>("ws://127.0.0.1:9/echo"))
        let ending = try await Self.within { await socket.ended() }
        guard case .failed(.transport) = ending else {
            Issue.record("ended as \(String(describing: socket.ending))")
            return
        }
    }
}

/// The closure and delegate styles: events in order on the callback queue, `.ended` once.
@Suite struct WebSocketCallbackTests {
    final class Recorder: WebSocketDelegate, @unchecked Sendable {
        let events = Locked<[WebSocketEvent]>([])
        func webSocket(_ socket: WebSocket, didOpenWith subprotocol: String?) {
            events.withLock { $0.append(.opened(subprotocol: subprotocol)) }
        }
        func webSocket(_ socket: WebSocket, didReceive message: WebSocketMessage) { events.withLock { $0.append(.message(message)) } }
        func webSocket(_ socket: WebSocket, didEndWith ending: WebSocketEnding) { events.withLock { $0.append(.ended(ending)) } }
    }

    @Test func eventsArriveInOrderOnTheCallbackQueueAndEndOnce() async throws {
        let client = try WebSocketTests.client { $0.callbackQueue = .queue(DispatchQueue(label: "callbacks")) }
        let events = Locked<[WebSocketEvent]>([])
        let socket = client.webSocket(Request<Data>("echo"), options: WebSocketOptions(protocols: ["v2"])) { _, event in
            dispatchPrecondition(condition: .notOnQueue(.main))
            events.withLock { $0.append(event) }
        }
        let sent = Locked<[TernError?]>([])
        socket.send("one") { error in sent.withLock { $0.append(error) } }
        socket.send("two") { error in sent.withLock { $0.append(error) } }
        #expect(await eventually { events.withLock { $0.count } == 3 })
        socket.close(.goingAway, reason: "leaving")
        #expect(await eventually { events.withLock { $0.count } == 4 })
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(
            events.withLock { $0 } == [
                .opened(subprotocol: "v2"), .message(.text("one")), .message(.text("two")), .ended(.closed(.goingAway, reason: "leaving")),
            ])
        #expect(sent.withLock { $0.count } == 2 && sent.withLock { $0.allSatisfy { $0 == nil } })
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == nil, "with a handler, messages go to it alone")
    }

    @Test func aDelegateHearsTheSameAndIsHeldWeakly() async throws {
        let client = try WebSocketTests.client { $0.callbackQueue = .immediate }
        let recorder = Recorder()
        let socket = client.webSocket(Request<Data>("close", query: ["code": 4002, "reason": "later"]), delegate: recorder)
        #expect(await eventually { recorder.events.withLock { $0.count } == 2 })
        #expect(
            recorder.events.withLock { $0 } == [
                .opened(subprotocol: nil), .ended(.closed(WebSocketCloseCode(rawValue: 4002), reason: "later")),
            ])
        #expect(socket.ending == .closed(WebSocketCloseCode(rawValue: 4002), reason: "later"))
    }
}
