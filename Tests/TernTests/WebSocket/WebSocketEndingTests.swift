import Foundation
import Testing

@testable import Tern

/// How sockets open and end at the seams: a stalled opening bounded by the request's `timeout`
/// and `deadline` (and not holding the next socket to its host), honest endings (`.closed` only
/// for the server's close frame), Tern's close frame reaching a server that is still sending,
/// reconnection after a server restart, and a cancelled reader.
/// One at a time, on a fixture port of their own: each stalls openings on purpose.
@Suite(.serialized) struct WebSocketEndingTests {
    static func client() throws -> Client {
        Client(baseURL: try TestServers.webSocketStallFixture().replacingOccurrences(of: "ws://", with: "http://"))
    }

    static func seconds(since start: DispatchTime) -> Double {
        Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
    }

    @Test(arguments: ["nohandshake", "halfhead"])
    func aStalledOpeningEndsAtTheRequestsTimeout(_ path: String) async throws {
        var request = Request<Data>(path)
        request.timeout = 1
        let client = try Self.client()
        let start = DispatchTime.now()
        let socket = client.webSocket(request)
        let ending = try await WebSocketTests.within { await socket.ended() }
        guard case .failed(.timedOut(let after)) = ending else {
            Issue.record("\(path): ended as \(ending)")
            return
        }
        #expect(after == 1)
        #expect(abs(Self.seconds(since: start) - 1) < 0.5, "\(path): \(Self.seconds(since: start)) s")
    }

    @Test func aStalledOpeningEndsAtTheRequestsDeadline() async throws {
        var request = Request<Data>("halfhead")
        request.timeout = 30
        request.deadline = 1.5
        let client = try Self.client()
        let start = DispatchTime.now()
        let socket = client.webSocket(request)
        let ending = try await WebSocketTests.within { await socket.ended() }
        #expect(ending == .failed(.deadlineExceeded(after: 1.5)))
        #expect(abs(Self.seconds(since: start) - 1.5) < 0.5, "\(Self.seconds(since: start)) s")
    }

    @Test func aStalledOpeningDoesNotHoldTheNextSocketToItsHostPastItsTimeout() async throws {
        let client = try Self.client()
        var stalled = Request<Data>("nohandshake")
        stalled.timeout = 1
        let first = client.webSocket(stalled)
        let start = DispatchTime.now()
        let second = client.webSocket(Request<Data>("deaf"))
        try await WebSocketTests.within { try await second.opened() }
        // It waited its turn behind the stalled one (§4.1), and no longer than that one's timeout.
        #expect(Self.seconds(since: start) < 2, "\(Self.seconds(since: start)) s")
        let firstEnding = try await WebSocketTests.within { await first.ended() }
        guard case .failed(.timedOut) = firstEnding else {
            Issue.record("the stalled socket did not time out")
            return
        }
        second.cancel()
    }

    @Test func aCancelDuringAStalledOpeningEndsItAndFreesTheHost() async throws {
        let client = try Self.client()
        let stalled = client.webSocket(Request<Data>("nohandshake"))
        let next = client.webSocket(Request<Data>("deaf"))
        try await Task.sleep(nanoseconds: 200_000_000)
        client.cancelAll()
        #expect(try await WebSocketTests.within(3) { await stalled.ended() } == .failed(.cancelled(.explicit)))
        #expect(try await WebSocketTests.within(3) { await next.ended() } == .failed(.cancelled(.explicit)))
        let after = client.webSocket(Request<Data>("deaf"))
        try await WebSocketTests.within(3) { try await after.opened() }
        after.cancel()
    }

    @Test func aCloseTheServerNeverAnswersIsATimeoutNotAClose() async throws {
        let socket = try Self.client().webSocket(Request<Data>("deaf"), options: WebSocketOptions(closeTimeout: 0.5))
        try await WebSocketTests.within { try await socket.opened() }
        socket.close(.normalClosure, reason: "bye")
        #expect(try await WebSocketTests.within { await socket.ended() } == .failed(.timedOut(after: 0.5)))
        #expect(socket.sentCloseCode == .normalClosure)
    }

    @Test func theServersCloseIsClosedWithTheCodeSentBesideIt() async throws {
        let socket = try WebSocketTests.client().webSocket(Request<Data>("close", query: ["code": 4001, "reason": "bye"]))
        #expect(try await WebSocketTests.within { await socket.ended() } == .closed(WebSocketCloseCode(rawValue: 4001), reason: "bye"))
        #expect(socket.sentCloseCode == WebSocketCloseCode(rawValue: 4001))
    }

    @Test func aCloseBeforeTheSocketOpenedIsACancel() async throws {
        let socket = try Self.client().webSocket(Request<Data>("nohandshake"))
        socket.close()
        #expect(try await WebSocketTests.within { await socket.ended() } == .failed(.cancelled(.explicit)))
        #expect(socket.sentCloseCode == nil)
    }

    @Test(arguments: [
        ("badaccept", WebSocketHandshakeFailure.wrongAccept), ("noupgrade", .notUpgraded),
        ("extension", .unofferedExtension("permessage-deflate")), ("subprotocol", .unofferedSubprotocol("never-offered")),
    ])
    func aBrokenHandshakeIsItsOwnFailureWithNoCloseCode(_ path: String, _ failure: WebSocketHandshakeFailure) async throws {
        let socket = try Self.client().webSocket(Request<Data>(path))
        #expect(try await WebSocketTests.within { await socket.ended() } == .failed(.webSocketHandshakeFailed(failure)))
        #expect(socket.sentCloseCode == nil)
    }

    /// The server keeps sending after the violation: Tern's 1002 must still reach it, every time.
    @Test func theCloseFrameReachesAServerThatIsStillSending() async throws {
        let client = try Self.client()
        var lost: [String] = []
        for run in 0..<100 {
            let id = "\(UUID().uuidString)-\(run)"
            let flood = client.webSocket(Request<Data>("flood", query: ["id": id]))
            let ending = try await WebSocketTests.within { await flood.ended() }
            guard case .failed(.webSocketFailed(.protocolError, _)) = ending else {
                Issue.record("run \(run): ended as \(String(describing: flood.ending))")
                continue
            }
            let report = client.webSocket(Request<Data>("report", query: ["id": id]))
            let received = try await WebSocketTests.within { () async throws -> WebSocketMessage? in
                var iterator = report.messages.makeAsyncIterator()
                return try await iterator.next()
            }
            report.cancel()
            if received != .text("1002") { lost.append("run \(run): \(String(describing: received))") }
        }
        #expect(lost.count == 0, "\(lost.count) of 100 close frames lost: \(lost.prefix(5))")
    }

    @Test(arguments: [1001, 1012, 1013])
    func aServerRestartReconnects(_ code: Int) async throws {
        let events = Locked<[WebSocketEvent]>([])
        let socket = try WebSocketTests.client().webSocket(
            Request<Data>("close", query: ["code": code, "reason": "restarting"]),
            options: WebSocketOptions(reconnect: WebSocketReconnectPolicy(maxAttempts: 1, baseDelay: 0.05, jitter: 0))
        ) { _, event in events.withLock { $0.append(event) } }
        let ending = try await WebSocketTests.within { await socket.ended() }
        #expect(ending == .closed(WebSocketCloseCode(rawValue: UInt16(code)), reason: "restarting"))
        #expect(await eventually { events.withLock { $0.last } == .ended(ending) })
        #expect(events.withLock { $0.filter { $0 == .opened(subprotocol: nil) }.count } == 2, "\(events.withLock { $0 })")
    }

    @Test(arguments: [1000, 1002, 1003, 1008, 1011, 4000])
    func aCloseTheServerMeantDoesNotReconnect(_ code: Int) async throws {
        let events = Locked<[WebSocketEvent]>([])
        let socket = try WebSocketTests.client().webSocket(
            Request<Data>("close", query: ["code": code]),
            options: WebSocketOptions(reconnect: WebSocketReconnectPolicy(maxAttempts: 3, baseDelay: 0.05, jitter: 0))
        ) { _, event in events.withLock { $0.append(event) } }
        _ = try await WebSocketTests.within { await socket.ended() }
        #expect(await eventually { events.withLock { $0.count } == 2 })
        #expect(!events.withLock { $0 }.contains { if case .reconnecting = $0 { true } else { false } }, "\(code)")
    }

    @Test func openingsSeeEachReconnectionSoAResubscribeNeedsNoBox() async throws {
        let socket = try WebSocketTests.client().webSocket(
            Request<Data>("close", query: ["code": 1012, "delay": 0.3]),
            options: WebSocketOptions(reconnect: WebSocketReconnectPolicy(maxAttempts: 2, baseDelay: 0.2, jitter: 0)))
        // Each connection stays open 0.3 s: a test thread held up between opening the socket and
        // asking for its openings still finds the first one open (it is yielded at once), where a
        // server that closed at once let a loaded CI run miss it.
        let sequence = socket.openings()
        let openings = try await WebSocketTests.within {
            var count = 0
            for await _ in sequence { count += 1 }
            return count
        }
        #expect(openings == 3)
    }

    @Test func aCancelledReaderStopsWaitingAndTheSocketRunsOn() async throws {
        let socket = try WebSocketTests.client().webSocket(Request<Data>("echo"))
        try await WebSocketTests.within { try await socket.opened() }
        let reader = Task {
            var iterator = socket.messages.makeAsyncIterator()
            return try await iterator.next()
        }
        try await Task.sleep(nanoseconds: 200_000_000)
        reader.cancel()
        let outcome = try await WebSocketTests.within(3) { await reader.result }
        #expect(throws: CancellationError.self) { try outcome.get() }
        try await socket.send("still open")
        let echoed = try await WebSocketTests.within { () async throws -> WebSocketMessage? in
            var iterator = socket.messages.makeAsyncIterator()
            return try await iterator.next()
        }
        #expect(echoed == .text("still open"))
        socket.close()
    }
}
