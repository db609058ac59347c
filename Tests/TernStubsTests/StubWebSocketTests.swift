import Foundation
import Tern
import TernStubs
import Testing

/// Stub sockets: an app's WebSocket code tested without a server — greetings, replies, the
/// server's close and failure, a refused handshake, subprotocols and the recorded upgrade request.
@Suite struct StubWebSocketTests {
    let stubs = StubTransport()
    let client: Client

    init() {
        let stubs = self.stubs
        client = Client(baseURL: "https://api.test/v1") { $0.transport = stubs }
    }

    @Test func aStubSocketGreetsRepliesAndCloses() async throws {
        stubs.stubWebSocket(
            .get("/v1/live"),
            StubWebSocket(subprotocol: "v2", greeting: [.send(.text("hello"))]) { message in
                message == .text("subscribe") ? [.send(.text("3°C"))] : [.close(.policyViolation, reason: "unknown")]
            })
        let socket = client.webSocket(
            Request<Data>("live", headers: ["Authorization": "Bearer t"]),
            options: WebSocketOptions(protocols: ["v2"]))
        #expect(try await socket.opened() == "v2")
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .text("hello"))
        try await socket.send("subscribe")
        #expect(try await iterator.next() == .text("3°C"))
        try await socket.send("nonsense")
        #expect(try await iterator.next() == nil)
        #expect(await socket.ended() == .closed(.policyViolation, reason: "unknown"))
        #expect(stubs.received(.get("/v1/live")).first?.value(forHTTPHeaderField: "Authorization") == "Bearer t")
    }

    @Test func waitsPaceTheServersPushesAndNothingFollowsAClose() async throws {
        stubs.stubWebSocket(
            .get("/v1/ticks"),
            StubWebSocket(greeting: [
                .send(.text("1")), .wait(0.2), .send(.text("2")), .wait(0.2), .close(.goingAway, reason: "restart"), .send(.text("never")),
            ]))
        let started = Date()
        let socket = client.webSocket(Request<Data>("ticks"))
        var received: [WebSocketMessage] = []
        for try await message in socket.messages { received.append(message) }
        #expect(received == [.text("1"), .text("2")])
        #expect(Date().timeIntervalSince(started) >= 0.4)
        #expect(await socket.ended() == .closed(.goingAway, reason: "restart"))
    }

    @Test func theEchoStubAndTheAppsClose() async throws {
        stubs.stubWebSocket(.get("/v1/echo"), .echo)
        let socket = client.webSocket(Request<Data>("echo"))
        try await socket.send(Data([1, 2, 3]))
        var iterator = socket.messages.makeAsyncIterator()
        #expect(try await iterator.next() == .data(Data([1, 2, 3])))
        try await socket.ping()
        socket.close(.goingAway, reason: "bye")
        #expect(await socket.ended() == .closed(.goingAway, reason: "bye"))
    }

    @Test func refusalsFailuresAndUnmatchedSockets() async throws {
        stubs.stubWebSocket(.get("/v1/private"), StubWebSocket(refusal: .string("no", status: 403)))
        stubs.stubWebSocket(.get("/v1/flaky"), StubWebSocket(greeting: [.fail(.networkConnectionLost)]))
        guard case .failed(.unacceptableStatus(403, let body, _, _)) = await client.webSocket(Request<Data>("private")).ended() else {
            Issue.record("the refusal was not a 403")
            return
        }
        #expect(String(decoding: body, as: UTF8.self) == "no")
        let flaky = await client.webSocket(Request<Data>("flaky")).ended()
        #expect(flaky == .failed(.transport(URLError(.networkConnectionLost))))
        guard case .failed(.unacceptableStatus(404, _, _, _)) = await client.webSocket(Request<Data>("nowhere")).ended() else {
            Issue.record("an unmatched socket was not refused")
            return
        }
    }

    @Test func aCancelEndsAStubSocketLikeARealOne() async throws {
        stubs.stubWebSocket(.get("/v1/live"), .echo)
        var request = Request<Data>("live")
        request.tags = ["screen"]
        let socket = client.webSocket(request)
        try await socket.opened()
        #expect(client.cancel(tag: "screen") == 1)
        #expect(await socket.ended() == .failed(.cancelled(.explicit)))
    }
}
