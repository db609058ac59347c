import Foundation
import Testing
import TernStubs

@testable import Tern

/// Reconnection: after a failure a new connection may cure, the socket connects again under its
/// policy — one messages sequence, `.reconnecting` then `.opened` each time, one ending — and
/// never after a normal close, a refusal or the app's own close.
@Suite struct WebSocketReconnectTests {
    static let quick = WebSocketReconnectPolicy(maxAttempts: 2, baseDelay: 0.05, maxDelay: 0.1, jitter: 0)

    @Test func aServiceRestartCloseReconnectsUntilThePolicyGivesUp() async throws {
        let client = try WebSocketTests.client()
        let events = Locked<[WebSocketEvent]>([])
        let socket = client.webSocket(
            Request<Data>("close", query: ["code": 1012, "reason": "restarting"]),
            options: WebSocketOptions(reconnect: Self.quick)
        ) { _, event in events.withLock { $0.append(event) } }
        let ending = try await WebSocketTests.within { await socket.ended() }
        #expect(ending == .closed(WebSocketCloseCode(rawValue: 1012), reason: "restarting"))
        #expect(await eventually { events.withLock { $0.last } == .ended(ending) })
        #expect(
            events.withLock { $0 } == [
                .opened(subprotocol: nil), .reconnecting(attempt: 1, after: 0.05), .opened(subprotocol: nil),
                .reconnecting(attempt: 2, after: 0.1), .opened(subprotocol: nil), .ended(ending),
            ])
    }

    @Test func aNormalCloseARefusalAndTheAppsCloseDoNotReconnect() async throws {
        let client = try WebSocketTests.client()
        let options = WebSocketOptions(reconnect: Self.quick)
        let normal = client.webSocket(Request<Data>("close", query: ["code": 1000]), options: options)
        #expect(try await WebSocketTests.within { await normal.ended() } == .closed(.normalClosure, reason: ""))
        let refused = client.webSocket(Request<Data>("reject"), options: options)
        let refusal = try await WebSocketTests.within { await refused.ended() }
        guard case .failed(.unacceptableStatus(403, _, _, _)) = refusal else {
            Issue.record("a refused handshake was retried or not reported")
            return
        }
        let closed = client.webSocket(Request<Data>("echo"), options: options)
        try await WebSocketTests.within { try await closed.opened() }
        closed.close(.goingAway, reason: "leaving")
        #expect(try await WebSocketTests.within { await closed.ended() } == .closed(.goingAway, reason: "leaving"))
    }

    /// A server that drops the first connection after one message and keeps the second.
    final class DropsOnce: WebSocketServing, @unchecked Sendable {
        let connections = Locked(0)
        func serveWebSocket(_ request: URLRequest, protocols: [String], peer: WebSocketPeer) -> Bool {
            let number = connections.withLock {
                $0 += 1; return $0
            }
            peer.accept()
            peer.send(.text("connection \(number)"))
            peer.onMessage { message in peer.send(message) }
            if number == 1 { peer.fail(URLError(.networkConnectionLost)) }
            return true
        }
    }

    struct ServingTransport: WebSocketTransport, WebSocketServing {
        let server: DropsOnce
        func start(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? { nil }
        func invalidate() {}
        func openWebSocket(_ attempt: WebSocketAttempt) -> (any TransportTask)? { attempt.serve(by: self) }
        func serveWebSocket(_ request: URLRequest, protocols: [String], peer: WebSocketPeer) -> Bool {
            server.serveWebSocket(request, protocols: protocols, peer: peer)
        }
    }

    @Test func oneMessagesSequenceSpansTheReconnection() async throws {
        let server = DropsOnce()
        let client = Client(baseURL: "https://live.test") { $0.transport = ServingTransport(server: server) }
        let socket = client.webSocket(Request<Data>("live"), options: WebSocketOptions(reconnect: Self.quick))
        try await WebSocketTests.within {
            var iterator = socket.messages.makeAsyncIterator()
            #expect(try await iterator.next() == .text("connection 1"))
            #expect(try await iterator.next() == .text("connection 2"))
            try await socket.send("still here")
            #expect(try await iterator.next() == .text("still here"))
        }
        #expect(server.connections.withLock { $0 } == 2 && socket.ending == nil)
        socket.close()
        #expect(try await WebSocketTests.within { await socket.ended() } == .closed(.normalClosure, reason: ""))
    }
}

/// A refused upgrade goes to the request's response rules like any response: `Authentication`
/// refreshes an expired token once and the socket connects with the new one.
@Suite struct WebSocketAuthenticationTests {
    struct Tokens: Authenticator {
        let refreshes = Locked(0)
        func apply(_ credential: String, to request: inout URLRequest) {
            request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
        }
        func refresh(_ credential: String) async throws -> String {
            refreshes.withLock { $0 += 1 }
            return "fresh"
        }
    }

    @Test func a401UpgradeRefreshesTheTokenAndConnects() async throws {
        let tokens = Tokens()
        let client = try WebSocketTests.client { $0.hooks.authenticate(with: Authentication(tokens, credential: "stale")) }
        let socket = client.webSocket(Request<Data>("auth"))
        try await WebSocketTests.within {
            try await socket.opened()
            var iterator = socket.messages.makeAsyncIterator()
            try await socket.send("with a fresh token")
            #expect(try await iterator.next() == .text("with a fresh token"))
        }
        #expect(tokens.refreshes.withLock { $0 } == 1)
        socket.close()
        #expect(try await WebSocketTests.within { await socket.ended() } == .closed(.normalClosure, reason: ""))
    }

    @Test func aRefreshThatCannotHelpEndsWithTheLoopGuardsError() async throws {
        struct Useless: Authenticator {
            func apply(_ credential: String, to request: inout URLRequest) {
                request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
            }
            func refresh(_ credential: String) async throws -> String { "still-stale" }
        }
        let client = try WebSocketTests.client {
            $0.hooks.authenticate(with: Authentication(Useless(), credential: "stale", refreshLimit: 2, window: 60))
        }
        let ending = try await WebSocketTests.within { await client.webSocket(Request<Data>("auth")).ended() }
        guard case .failed(.rejected(by: "Authentication", let error)) = ending, error is AuthenticationError else {
            Issue.record("ended as \(ending)")
            return
        }
    }
}
