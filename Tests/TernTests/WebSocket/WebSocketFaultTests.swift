import Foundation
import Testing

@testable import Tern

/// What a conformant server never sends, from the hostile fixture (`scripts/fixture_websocket.py`):
/// each malformed frame closes the socket with its code, each broken handshake fails it, a stall
/// mid-frame is caught by the heartbeat, a connection that just ends is an abnormal closure.
@Suite struct WebSocketFaultTests {
    static func socket(_ path: String, options: WebSocketOptions = WebSocketOptions()) throws -> WebSocket {
        let base = try TestServers.webSocketFixture()
        return Client(baseURL: base.replacingOccurrences(of: "ws://", with: "http://")).webSocket(Request<Data>(path), options: options)
    }

    static func failure(_ path: String, options: WebSocketOptions = WebSocketOptions()) async throws -> TernError? {
        let ending = try await WebSocketTests.within { try await Self.socket(path, options: options).ended() }
        if case .failed(let error) = ending { return error }
        Issue.record("\(path): ended as \(ending)")
        return nil
    }

    @Test(arguments: [
        ("rsv", WebSocketCloseCode.protocolError), ("opcode", .protocolError), ("masked", .protocolError),
        ("bigping", .protocolError), ("badclose", .protocolError), ("badutf8", .invalidFramePayloadData),
    ])
    func aMalformedFrameClosesWithItsCode(_ path: String, _ code: WebSocketCloseCode) async throws {
        guard case .webSocketFailed(let sent, let reason)? = try await Self.failure(path) else {
            Issue.record("\(path): not a WebSocket failure")
            return
        }
        #expect(sent == code, "\(path): \(reason)")
    }

    @Test func fragmentsWithAPingBetweenThemMakeOneMessageAndThePingIsAnswered() async throws {
        let socket = try Self.socket("fragmented")
        try await WebSocketTests.within { () async throws -> Void in
            var iterator = socket.messages.makeAsyncIterator()
            #expect(try await iterator.next() == .text("北京!"))
            #expect(try await iterator.next() == .text("pong ok"))
        }
        socket.close()
        #expect(try await WebSocketTests.within { await socket.ended() } == .closed(.normalClosure, reason: ""))
    }

    @Test func aServerThatStallsMidFrameIsCaughtByTheHeartbeat() async throws {
        let error = try await Self.failure("stall", options: WebSocketOptions(pingInterval: 0.3, pongTimeout: 0.5))
        guard case .timedOut? = error else {
            Issue.record("expected .timedOut, got \(String(describing: error))")
            return
        }
    }

    @Test func aConnectionThatEndsWithoutACloseFrameIsAnAbnormalClosure() async throws {
        guard case .webSocketFailed(.abnormalClosure, _)? = try await Self.failure("eof") else {
            Issue.record("not an abnormal closure")
            return
        }
    }
}
