import Foundation
import Testing
@testable import Tern

/// The outbox against the fixture's `/effects`, which honours `Idempotency-Key` and counts effects:
/// every accepted item reaches the server once, online, offline, and across a reopen.
@Suite struct OutboxTests {
    private func client(_ kind: TransportKind, _ configure: (inout ClientConfiguration) -> Void = { _ in }) throws -> Client {
        kind.client(try TestServers.fixture(), configure)
    }

    @Test(arguments: TransportKind.all)
    func anItemSentOnlineTakesEffectOnceAndIsKeptWithItsAnswer(kind: TransportKind) async throws {
        let name = Fixture.uniqueKey("online")
        let outbox = try Outbox(client: try client(kind), configuration: OutboxFixture.configuration(OutboxFixture.directory()))
        defer { outbox.close() }
        let id = try outbox.enqueue(OutboxFixture.write(name, "like 42"))
        let item = try #require(await OutboxFixture.outcome(outbox, id))
        #expect(item.state == .delivered(statusCode: 201))
        #expect(item.attempts == 1)
        let answer = try JSON(data: item.responseBody ?? Data())
        #expect(answer["body"]?.string == "like 42")
        #expect(answer["key"]?.string == item.idempotencyKey)
        let effects = try await OutboxFixture.effects(name)
        #expect(effects.effects == 1)
        #expect(effects.keys == [item.idempotencyKey: 1])
        #expect(outbox.pendingCount == 0)
        // The answer is read from the store, not kept in memory with the item.
        #expect(outbox.state.withLock { $0.records.values.allSatisfy { $0.resultBody == nil } })
        #expect(outbox.item(id)?.responseBody == item.responseBody)
        #expect(outbox.items.first?.responseBody == item.responseBody)
        let directory = outbox.directory
        outbox.close()
        let reopened = try Outbox(client: try client(kind), configuration: OutboxFixture.configuration(directory))
        defer { reopened.close() }
        #expect(reopened.item(id)?.responseBody == item.responseBody)
        #expect(reopened.item(id)?.state == .delivered(statusCode: 201))
    }

    @Test(arguments: TransportKind.all)
    func itemsAcceptedOfflineWaitForTheNetworkThenEachTakesEffectOnce(kind: TransportKind) async throws {
        let name = Fixture.uniqueKey("offline")
        let network = offlineMonitor()
        let outbox = try Outbox(
            client: try client(kind), configuration: OutboxFixture.configuration(OutboxFixture.directory()) { $0.networkMonitor = network })
        defer { outbox.close() }
        for index in 0..<8 { try outbox.enqueue(OutboxFixture.write(name, "item \(index)")) }
        try await Task.sleep(nanoseconds: 200_000_000)
        #expect(outbox.pendingCount == 8)
        #expect(try await OutboxFixture.effects(name).requests == 0)
        network.set(reachable: true)
        let items = try await OutboxFixture.settle(outbox)
        #expect(items.allSatisfy { $0.state == .delivered(statusCode: 201) })
        let effects = try await OutboxFixture.effects(name)
        #expect(effects.effects == 8)
        #expect(effects.keys.count == 8 && effects.keys.values.allSatisfy { $0 == 1 })
    }

    @Test(arguments: TransportKind.all)
    func aReopenedOutboxSendsWhatAnEarlierOneAcceptedAndTellsItsOutcome(kind: TransportKind) async throws {
        let name = Fixture.uniqueKey("reopen")
        let directory = OutboxFixture.directory()
        let network = offlineMonitor()
        let first = try Outbox(
            client: try client(kind), configuration: OutboxFixture.configuration(directory) { $0.networkMonitor = network })
        let ids = try (0..<5).map { index in try first.enqueue(OutboxFixture.write(name, "item \(index)"), orderingGroup: "chat") }
        first.close()
        #expect(throws: OutboxError.self) { try first.enqueue(OutboxFixture.write(name, "late")) }

        let second = try Outbox(client: try client(kind), configuration: OutboxFixture.configuration(directory))
        defer { second.close() }
        let delivered = await OutboxFixture.events(second.events) { events in
            events.filter { if case .delivered = $0 { true } else { false } }.count == 5
        }.compactMap { event -> OutboxItem.ID? in if case .delivered(let item) = event { item.id } else { nil } }
        #expect(delivered == ids)
        let effects = try await OutboxFixture.effects(name)
        #expect(effects.effects == 5)
        #expect(effects.order == (0..<5).map { "item \($0)" })
        #expect(second.item(ids[0])?.state == .delivered(statusCode: 201))
    }

    @Test(arguments: TransportKind.all)
    func anOrderingGroupKeepsItsOrderThroughARetryWhileOtherGroupsGoOn(kind: TransportKind) async throws {
        let chat = Fixture.uniqueKey("ordered")
        let other = Fixture.uniqueKey("other")
        let outbox = try Outbox(client: try client(kind), configuration: OutboxFixture.configuration(OutboxFixture.directory()))
        defer { outbox.close() }
        // The first request to the chat fails with 503: the item is retried, and the rest of its
        // group waits for it.
        for index in 0..<6 { try outbox.enqueue(OutboxFixture.write(chat, "m\(index)", query: ["fail": 1]), orderingGroup: "chat") }
        for index in 0..<3 { try outbox.enqueue(OutboxFixture.write(other, "o\(index)")) }
        // Up to 60 s: under ThreadSanitizer a URLSession answer once took over 20 s to be handed
        // over (the head's second send had taken effect on the server, its answer not yet here).
        let items = try await OutboxFixture.settle(outbox, seconds: 60)
        #expect(items.count == 9)
        let chatEffects = try await OutboxFixture.effects(chat)
        #expect(chatEffects.order == (0..<6).map { "m\($0)" })
        #expect(chatEffects.requests == 7)
        #expect(try await OutboxFixture.effects(other).effects == 3)
        #expect(items.first?.attempts == 2)
    }

    @Test(arguments: TransportKind.all)
    func aRefusalFailsTheItemForGoodAndKeepsItWhileItsGroupGoesOn(kind: TransportKind) async throws {
        let name = Fixture.uniqueKey("refused")
        let outbox = try Outbox(client: try client(kind), configuration: OutboxFixture.configuration(OutboxFixture.directory()))
        defer { outbox.close() }
        let refused = try outbox.enqueue(OutboxFixture.write(name, "bad", query: ["status": 422]), orderingGroup: "g")
        let next = try outbox.enqueue(OutboxFixture.write(name, "good"), orderingGroup: "g")
        let failed = try #require(await OutboxFixture.outcome(outbox, refused))
        guard case .failed(.rejected(let code, let body)) = failed.state else {
            Issue.record("expected a rejection, got \(failed.state)")
            return
        }
        #expect(code == 422)
        #expect(String(decoding: body, as: UTF8.self).contains("refused"))
        #expect(await OutboxFixture.outcome(outbox, next)?.state == .delivered(statusCode: 201))
        #expect(outbox.items.count == 2)
        #expect(outbox.cancel(refused))
        #expect(outbox.item(refused) == nil)
        #expect(try await OutboxFixture.effects(name).effects == 1)
    }

    @Test(arguments: TransportKind.all)
    func aServerErrorBacksOffHonoursRetryAfterAndDeliversOnce(kind: TransportKind) async throws {
        let name = Fixture.uniqueKey("backoff")
        let outbox = try Outbox(client: try client(kind), configuration: OutboxFixture.configuration(OutboxFixture.directory()))
        defer { outbox.close() }
        let events = outbox.events
        let id = try outbox.enqueue(OutboxFixture.write(name, "x", query: ["fail": 2, "retry_after": "0.3"]))
        let delays = await OutboxFixture.events(events) { events in
            if case .delivered? = events.last { true } else { false }
        }.compactMap { event -> TimeInterval? in if case .willRetry(_, let delay) = event { delay } else { nil } }
        #expect(delays == [0.3, 0.3])
        #expect(outbox.item(id)?.attempts == 3)
        #expect(outbox.item(id)?.lastError == nil)
        let effects = try await OutboxFixture.effects(name)
        #expect(effects.effects == 1 && effects.requests == 3)
    }

    @Test func anItemPastItsAgeLimitExpiresUnsent() async throws {
        let name = Fixture.uniqueKey("expired")
        let network = offlineMonitor()
        let outbox = try Outbox(
            client: try client(.urlSession),
            configuration: OutboxFixture.configuration(OutboxFixture.directory()) {
                $0.networkMonitor = network
                $0.maximumAge = 0.2
            })
        defer { outbox.close() }
        let id = try outbox.enqueue(OutboxFixture.write(name, "stale"))
        try await Task.sleep(nanoseconds: 400_000_000)
        network.set(reachable: true)
        #expect(await OutboxFixture.outcome(outbox, id)?.state == .failed(.expired))
        #expect(try await OutboxFixture.effects(name).requests == 0)
        #expect(outbox.retry(id))
        #expect(await OutboxFixture.outcome(outbox, id)?.state == .delivered(statusCode: 201))
    }

    @Test func limitsRefuseAnItemWithATypedErrorAndStoreNothing() throws {
        let directory = OutboxFixture.directory()
        let offline = offlineMonitor()
        let outbox = try Outbox(
            client: try client(.urlSession),
            configuration: OutboxFixture.configuration(directory) {
                $0.networkMonitor = offline
                $0.maximumCount = 2
                $0.maximumBytes = 10
            })
        defer { outbox.close() }
        try outbox.enqueue(OutboxFixture.write("limits", "12345"))
        #expect(throws: OutboxError.limitReached(.bytes(10))) { try outbox.enqueue(OutboxFixture.write("limits", "123456")) }
        try outbox.enqueue(OutboxFixture.write("limits", "12345"))
        #expect(throws: OutboxError.limitReached(.count(2))) { try outbox.enqueue(OutboxFixture.write("limits", "")) }
        #expect(outbox.items.count == 2)
        #expect(throws: OutboxError.invalidRequest(.invalidRequest(.bodyNotAllowed(method: "GET")))) {
            try outbox.enqueue(Request<JSON>("effects/x", body: .json(["a": 1])))
        }
        #expect(throws: OutboxError.directoryInUse(directory.standardizedFileURL)) {
            try Outbox(client: try client(.urlSession), configuration: OutboxFixture.configuration(directory))
        }
    }

    @Test func theFirstDelegateHearsWhatHappenedBeforeItWasSet() async throws {
        let name = Fixture.uniqueKey("delegate")
        let outbox = try Outbox(client: try client(.urlSession), configuration: OutboxFixture.configuration(OutboxFixture.directory()))
        defer { outbox.close() }
        try outbox.enqueue(OutboxFixture.write(name, "before anyone listened"))
        try await OutboxFixture.settle(outbox)
        let recorder = OutboxRecorder()
        outbox.delegate = recorder
        let end = Date().addingTimeInterval(5)
        while recorder.events.withLock({ $0.count }) < 2, Date() < end { try await Task.sleep(nanoseconds: 10_000_000) }
        #expect(recorder.events.withLock { $0 } == ["enqueued", "delivered"])
    }

    @Test func aQueuedItemCancelledIsNeverSent() async throws {
        let name = Fixture.uniqueKey("cancelled")
        let network = offlineMonitor()
        let outbox = try Outbox(
            client: try client(.urlSession),
            configuration: OutboxFixture.configuration(OutboxFixture.directory()) { $0.networkMonitor = network })
        defer { outbox.close() }
        let events = outbox.events
        let dropped = try outbox.enqueue(OutboxFixture.write(name, "dropped"))
        let kept = try outbox.enqueue(OutboxFixture.write(name, "kept"))
        #expect(outbox.cancel(dropped))
        #expect(!outbox.cancel(dropped))
        network.set(reachable: true)
        #expect(await OutboxFixture.outcome(outbox, kept)?.state == .delivered(statusCode: 201))
        #expect(try await OutboxFixture.effects(name).order == ["kept"])
        let seen = await OutboxFixture.events(events) { $0.count == 4 }.map { event in
            switch event {
            case .enqueued: "enqueued"
            case .removed: "removed"
            case .delivered: "delivered"
            default: "other"
            }
        }
        #expect(seen == ["enqueued", "enqueued", "removed", "delivered"])
    }
}

/// Records an outbox's events as its delegate.
final class OutboxRecorder: OutboxDelegate {
    let events = Locked([String]())

    func outbox(_ outbox: Outbox, didRecord event: OutboxEvent) {
        let name =
            switch event {
            case .enqueued: "enqueued"
            case .delivered: "delivered"
            case .failed: "failed"
            case .willRetry: "willRetry"
            case .removed: "removed"
            }
        events.withLock { $0.append(name) }
    }
}

extension OutboxError: Equatable {
    public static func == (lhs: OutboxError, rhs: OutboxError) -> Bool { lhs.description == rhs.description }
}
