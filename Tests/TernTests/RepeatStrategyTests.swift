import Foundation
import Testing
@testable import Tern

/// Repeat strategies, counted at the server.
@Suite struct RepeatStrategyTests {
    let client: Client

    init() throws {
        client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
    }

    @Test func searchAsYouTypeDeliversOnlyTheLastResult() async throws {
        let key = Fixture.uniqueKey("search")
        let outcomes = Outcomes()
        let text = "beijingshanghaiguang"
        for length in 1...20 {
            let query = String(text.prefix(length))
            // A slow server, so that no search can finish before the next keystroke even on a
            // loaded machine: every older search must end superseded.
            let search = Request<JSON>("counted", query: ["key": key, "q": query, "seconds": 2])
                .repeating(.cancelOlder, key: "search")
            client.send(search) { outcomes.record(length, $0) }
        }
        await outcomes.wait(for: 20)
        for length in 1..<20 { #expect(outcomes.of(length).map(\.failure) == [.cancelled(.superseded)], "search \(length)") }
        let last = try #require(outcomes.of(20).first?.success)
        #expect(last.json["q"]?.string == text)
        #expect(outcomes.all.values.allSatisfy { $0.count == 1 })
        #expect(try await Fixture.count(key) <= 20)
    }

    @Test func cancelOlderWithoutAKeyOnlyReplacesIdenticalRequests() async throws {
        let key = Fixture.uniqueKey("older")
        let outcomes = Outcomes()
        let request = Request<JSON>("counted", query: ["key": key, "seconds": 1]).repeating(.cancelOlder)
        client.send(request) { outcomes.record(0, $0) }
        client.send(Request<JSON>("counted", query: ["key": key, "seconds": 1, "other": 1]).repeating(.cancelOlder)) {
            outcomes.record(1, $0)
        }
        client.send(request) { outcomes.record(2, $0) }
        await outcomes.wait(for: 3)
        #expect(outcomes.of(0).first?.failure == .cancelled(.superseded))
        #expect(outcomes.of(1).first?.success != nil)
        #expect(outcomes.of(2).first?.success != nil)
    }

    @Test func ignoreNewerSendsOnlyTheFirst() async throws {
        let key = Fixture.uniqueKey("ignore")
        let outcomes = Outcomes()
        let refresh = Request<JSON>("counted", query: ["key": key, "seconds": 1]).repeating(.ignoreNewer)
        for index in 0..<5 { client.send(refresh) { outcomes.record(index, $0) } }
        await outcomes.wait(for: 5)
        #expect(outcomes.of(0).first?.success?.json["n"]?.int == 1)
        for index in 1..<5 { #expect(outcomes.of(index).map(\.failure) == [.cancelled(.duplicate)]) }
        #expect(try await Fixture.count(key) == 1)
        // Once it finished, the next one runs.
        let again = await client.completionResult(refresh)
        #expect(again.0.success?.json["n"]?.int == 2)
    }

    @Test func shareCoalescesAHundredCallersIntoOneNetworkCall() async throws {
        let key = Fixture.uniqueKey("share")
        let outcomes = Outcomes()
        // The server holds its answer until every caller has joined, however slow the machine.
        let query: Parameters = ["key": key, "hold": key]
        let request = Request<JSON>("counted", query: query).repeating(.share)
        let recorder = RecordingDelegate()
        let delegated = Locked<[Response<any Sendable>]>([])
        recorder.onResult = { result in if case .success(let response) = result { delegated.withLock { $0.append(response) } } }
        let awaited = Task { try await client.send(request) }
        let raw = Task { try await client.send(Request<Data>("counted", query: query).repeating(.share)) }
        while client.runningRequests.count < 2 { try await Task.sleep(milliseconds: 5) }
        // A plain send joins before it returns (no adapters).
        for index in 0..<97 { client.send(request) { outcomes.record(index, $0) } }
        client.send(request, delegate: recorder)
        try await Fixture.release(key)
        await outcomes.wait(for: 97)
        let (awaitedResponse, rawResponse) = try await (awaited.value, raw.value)
        try await Task.sleep(milliseconds: 100)
        let bodies = Set(
            outcomes.all.values.compactMap { $0.first?.success?.data } + [awaitedResponse.data, rawResponse.data]
                + delegated.withLock { $0.map(\.data) })
        #expect(bodies.count == 1, "every caller must get the same body")
        #expect(outcomes.all.count == 97 && delegated.withLock { $0.count } == 1)
        #expect(awaitedResponse.json["n"]?.int == 1)
        #expect(try await Fixture.count(key) == 1)
        #expect(client.runningRequests.isEmpty)
    }

    @Test func cancellingOneSharingCallerDetachesOnlyThatCaller() async throws {
        let key = Fixture.uniqueKey("detach")
        let outcomes = Outcomes()
        let request = Request<JSON>("counted", query: ["key": key, "seconds": 1]).repeating(.share)
        let first = client.send(request) { outcomes.record(0, $0) }
        client.send(request) { outcomes.record(1, $0) }
        first.cancel()
        await outcomes.wait(for: 2)
        #expect(outcomes.of(0).map(\.failure) == [.cancelled(.explicit)])
        #expect(outcomes.of(1).first?.success?.json["n"]?.int == 1)
        #expect(try await Fixture.count(key) == 1)
    }

    @Test func cancellingEverySharingCallerCancelsTheCall() async throws {
        let key = Fixture.uniqueKey("all-gone")
        let outcomes = Outcomes()
        let request = Request<JSON>("counted", query: ["key": key, "seconds": 3]).repeating(.share)
        let handles = (0..<3).map { index in client.send(request) { outcomes.record(index, $0) } }
        handles.forEach { $0.cancel() }
        await outcomes.wait(for: 3)
        #expect(outcomes.all.values.allSatisfy { $0.map(\.failure) == [.cancelled(.explicit)] })
        #expect(client.exchanges.isIdle && client.registry.withLock { $0.lifecycles.isEmpty })
        // A new identical request starts a new call and succeeds (the cancelled one may or may
        // not have reached the server, before or after it).
        let fresh = try await client.send(Request<JSON>("counted", query: ["key": key, "seconds": 0]).repeating(.share))
        #expect((1...2).contains(fresh.json["n"]?.int ?? 0))
        #expect((1...2).contains(try await Fixture.count(key)))
    }

    @Test func theSharedClientsConvenienceGetCancelsTheOlderSameURL() async throws {
        let key = Fixture.uniqueKey("shared-get")
        let url = try TestServers.fixture() + "/counted"
        let outcomes = Outcomes()
        let first = Client.shared.get(url, parameters: ["key": key, "seconds": 0.5]) { result in
            outcomes.record(0, result)
        }
        Client.shared.get(url, parameters: ["key": key, "seconds": 0.5]) { result in outcomes.record(1, result) }
        #expect(first.cancellationReason == .superseded)
        await outcomes.wait(for: 2)
        #expect(outcomes.of(1).first?.success != nil)
    }
}
