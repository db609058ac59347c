import Foundation
import Testing
@testable import Tern

/// How long an item waits after a failure: a refused or reset connection (a server restarting) is
/// tried again within a couple of seconds whatever the backoff, a launch does not inherit the
/// waits of the launches before it, and an answer from an origin sends what waited for it.
@Suite struct OutboxWaitTests {
    static func client(_ kind: TransportKind) throws -> Client {
        kind.client(try TestServers.fixture())
    }

    /// A POST to the fixture's `/flaky`: its first `fail` requests under `key` are answered as `mode` says.
    static func flaky(_ key: String, fail: Int, mode: String? = nil, status: Int? = nil) -> Request<JSON> {
        var query: Parameters = ["key": key, "fail": fail]
        if let mode { query["mode"] = mode }
        if let status { query["status"] = status }
        return Request<JSON>("flaky", method: .post, query: query, body: .data(Data("x".utf8), contentType: "text/plain"))
    }

    /// Three resets, each waited out on the connection's schedule (0.25 s, 0.5 s, 1 s) where the
    /// backoff would wait 1 s, 2 s, 4 s: the waits the outbox announces, not the wall-clock time,
    /// which a loaded machine stretches.
    @Test(arguments: TransportKind.all)
    func aResetConnectionIsTriedAgainSoonWhateverTheBackoff(kind: TransportKind) async throws {
        let configuration = OutboxFixture.configuration(OutboxFixture.directory()) {
            $0.initialRetryDelay = 1
            $0.maximumRetryDelay = 300
        }
        let outbox = try Outbox(client: try Self.client(kind), configuration: configuration)
        defer { outbox.close() }
        let events = outbox.events
        let id = try outbox.enqueue(Self.flaky(Fixture.uniqueKey("reset"), fail: 3, mode: "reset"))
        let seen = await OutboxFixture.events(events, seconds: 60) { seen in
            seen.contains { if case .delivered = $0 { true } else { false } }
        }
        let waits = seen.compactMap { event -> TimeInterval? in if case .willRetry(_, let after) = event { after } else { nil } }
        #expect(waits.count == 3 && zip(waits, [0.3, 0.6, 1.2]).allSatisfy { $0 <= $1 }, "\(waits)")
        #expect(outbox.item(id)?.state == .delivered(statusCode: 200) && outbox.item(id)?.attempts == 4)
    }

    @Test func aRefusedConnectionWaitsAtMostTwoSeconds() async throws {
        // Port 9 (discard): nothing listens there on these machines, so each connect is refused.
        let client = Client(baseURL: "http://127.0.0.1:9") { $0.callbackQueue = .immediate }
        let configuration = OutboxFixture.configuration(OutboxFixture.directory()) {
            $0.initialRetryDelay = 10
            $0.maximumRetryDelay = 300
        }
        let outbox = try Outbox(client: client, configuration: configuration)
        defer { outbox.close() }
        let events = outbox.events
        _ = try outbox.enqueue(Self.flaky("refused", fail: 0))
        let waits = await OutboxFixture.events(events, seconds: 15) { seen in
            seen.filter { if case .willRetry = $0 { true } else { false } }.count >= 4
        }.compactMap { event -> TimeInterval? in if case .willRetry(_, let after) = event { after } else { nil } }
        #expect(waits.count >= 4 && waits.allSatisfy { $0 <= 2.4 }, "\(waits)")
        #expect(waits.first.map { $0 <= 0.3 } == true, "\(waits)")
    }

    /// Attempts made before a restart are kept, but the backoff starts over: one failure in this
    /// launch waits the initial delay, not the delay of the item's tenth attempt.
    @Test func aLaunchDoesNotInheritTheWaitsOfTheOnesBefore() async throws {
        let directory = OutboxFixture.directory()
        let key = Fixture.uniqueKey("inherited")
        let first = try Outbox(client: try Self.client(.curl), configuration: OutboxFixture.configuration(directory))
        let id = try first.enqueue(Self.flaky(key, fail: 1000, status: 503))
        let failures = await OutboxFixture.events(first.events, seconds: 20) { seen in
            seen.filter { if case .willRetry = $0 { true } else { false } }.count >= 6
        }
        #expect(failures.count >= 6)
        first.close()

        let reopened = try Outbox(
            client: try Self.client(.curl),
            configuration: OutboxFixture.configuration(directory) {
                $0.initialRetryDelay = 0.5
                $0.maximumRetryDelay = 300
            })
        defer { reopened.close() }
        #expect((reopened.item(id)?.attempts ?? 0) >= 6)
        let waits = await OutboxFixture.events(reopened.events, seconds: 20) { seen in
            seen.contains { if case .willRetry = $0 { true } else { false } }
        }.compactMap { event -> TimeInterval? in if case .willRetry(_, let after) = event { after } else { nil } }
        #expect(waits.first.map { $0 <= 0.6 } == true, "the first wait after the restart: \(waits)")
    }
}

/// The app's link to its items: an id it chose before enqueueing, and a wait for an empty outbox.
@Suite struct OutboxLinkTests {
    @Test func anIdTheAppChoseIsStoredOnceAndDrainedWaitsForTheLast() async throws {
        let name = Fixture.uniqueKey("chosen")
        let outbox = try Outbox(
            client: TransportKind.curl.client(try TestServers.fixture()),
            configuration: OutboxFixture.configuration(OutboxFixture.directory()))
        defer { outbox.close() }
        let chosen = OutboxItem.ID("message-\(UUID().uuidString)")
        #expect(try outbox.enqueue(OutboxFixture.write(name, "hello"), id: chosen) == chosen)
        // The app relaunched before it knew the first enqueue had returned: it enqueues again.
        #expect(try outbox.enqueue(OutboxFixture.write(name, "hello"), id: chosen) == chosen)
        for index in 0..<5 { try outbox.enqueue(OutboxFixture.write(name, "more \(index)"), orderingGroup: "g") }
        await outbox.drained()
        #expect(outbox.pendingCount == 0)
        #expect(outbox.item(chosen)?.state == .delivered(statusCode: 201))
        #expect(try await OutboxFixture.effects(name).effects == 6)
        await outbox.drained()  // nothing pending: at once
    }
}
