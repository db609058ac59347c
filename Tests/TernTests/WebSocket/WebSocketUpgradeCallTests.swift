import Foundation
import Testing

@testable import Tern

/// Each connection's upgrade is an ordinary call, against the `websockets` package: the request's
/// redirect policy decides a 3xx, the client's metrics count it, a broken 101 fails it with its
/// typed handshake failure, and what the server sends right after its 101 waits for the socket.
@Suite struct WebSocketUpgradeCallTests {
    @Test func aRedirectedUpgradeIsFollowedUnderTheRedirectPolicy() async throws {
        let client = try WebSocketTests.client()
        let socket = client.webSocket(Request<Data>("moved"))
        try await WebSocketTests.within {
            try await socket.opened()
            var iterator = socket.messages.makeAsyncIterator()
            try await socket.send("followed")
            #expect(try await iterator.next() == .text("followed"))
        }
        socket.close()
        _ = try await WebSocketTests.within { await socket.ended() }

        var notFollowed = Request<Data>("moved")
        notFollowed.redirectPolicy = .never
        let unfollowed = client.webSocket(notFollowed)
        let refused = try await WebSocketTests.within { await unfollowed.ended() }
        guard case .failed(.unacceptableStatus(307, let body, _, _)) = refused else {
            Issue.record("ended as \(refused)")
            return
        }
        #expect(String(decoding: body, as: UTF8.self).contains("moved to /echo"))
    }

    @Test func theClientsMetricsCountEachUpgrade() async throws {
        let client = try WebSocketTests.client()
        let socket = client.webSocket(Request<Data>("echo"))
        try await WebSocketTests.within { try await socket.opened() }
        let refused = client.webSocket(Request<Data>("reject"))
        _ = try await WebSocketTests.within { await refused.ended() }
        #expect(await eventually { client.metrics.requestsByOutcome["success"] == 1 }, "\(client.metrics.requestsByOutcome)")
        #expect(client.metrics.requestsByOutcome["unacceptableStatus"] == 1, "\(client.metrics.requestsByOutcome)")
        socket.cancel()
    }

    /// A server may send frames right after its 101: they wait (unread past the first read) while
    /// the call delivers the 101, and arrive first once the socket begins.
    @Test func framesRightAfterThe101ArriveOnceTheSocketBegins() async throws {
        let socket = try WebSocketTests.client().webSocket(Request<Data>("push", query: ["n": 50, "size": 100]))
        let messages = try await WebSocketTests.within { () async throws -> [WebSocketMessage] in
            var received: [WebSocketMessage] = []
            for try await message in socket.messages {
                received.append(message)
                if received.count == 50 { break }
            }
            return received
        }
        #expect(messages.count == 50)
        #expect(messages.allSatisfy { $0.byteCount == 100 })
        socket.cancel()
    }
}
