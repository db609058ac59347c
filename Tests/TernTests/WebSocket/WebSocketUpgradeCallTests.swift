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

    /// A transport wrapping another forwards each upgrade attempt to it (the capability is the
    /// wrapped one's); a transport without the capability fails its sockets with a typed error.
    @Test func aWrappingTransportForwardsItsSocketsAndOneWithoutThemRefusesThem() async throws {
        let inner = try #require(Client.defaultTransport(for: ClientConfiguration()) as? any WebSocketTransport)
        let forwarding = Forwarding(wrapped: inner)
        let socket = try WebSocketTests.client { $0.transport = forwarding }.webSocket(Request<Data>("echo"))
        try await WebSocketTests.within {
            var iterator = socket.messages.makeAsyncIterator()
            try await socket.send("through the wrapper")
            #expect(try await iterator.next() == .text("through the wrapper"))
        }
        socket.close()
        _ = try await WebSocketTests.within { await socket.ended() }
        #expect(forwarding.attempts.withLock { $0 } == 1)

        let refused = try WebSocketTests.client { $0.transport = HTTPOnly(wrapped: inner) }.webSocket(Request<Data>("echo"))
        let ending = try await WebSocketTests.within { await refused.ended() }
        guard case .failed(.unsupportedConfiguration(let reason)) = ending else {
            Issue.record("ended as \(ending)")
            return
        }
        #expect(reason.contains("does not open WebSockets"), "\(reason)")
        inner.invalidate()
    }

    struct Forwarding: WebSocketTransport {
        let wrapped: any WebSocketTransport
        let attempts = Locked(0)

        func start(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
            wrapped.start(request, events: events)
        }

        func invalidate() {}

        func openWebSocket(_ attempt: WebSocketAttempt) -> (any TransportTask)? {
            attempts.withLock { $0 += 1 }
            return wrapped.openWebSocket(attempt)
        }
    }

    struct HTTPOnly: Transport {
        let wrapped: any Transport

        func start(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
            wrapped.start(request, events: events)
        }

        func invalidate() {}
    }

    /// Once a socket is open its upgrade call is gone: nothing of the request stays with a
    /// socket that never connects again (an adapter held only by the request is freed), so a
    /// socket, and each of its reconnections, keeps no finished call alive.
    @Test func theUpgradeCallIsFreedOnceTheSocketIsOpen() async throws {
        final class Sentinel: RequestAdapter, @unchecked Sendable {
            func adapt(_ request: URLRequest, for attempt: AttemptInfo) async throws -> URLRequest { request }
        }
        final class Watch: @unchecked Sendable {  // written once, before it is read
            weak var sentinel: Sentinel?
        }
        let watch = Watch()
        let socket: WebSocket
        do {
            let sentinel = Sentinel()
            watch.sentinel = sentinel
            var request = Request<Data>("echo")
            request.hooks.adapters.append(sentinel)
            socket = try WebSocketTests.client().webSocket(request)
        }
        try await WebSocketTests.within { try await socket.opened() }
        #expect(await eventually { watch.sentinel == nil }, "the upgrade call (and its request) outlived the opening")
        socket.cancel()
    }
}
