import Foundation
import Testing
@testable import Tern

/// The registry of requests in flight and the cancellation APIs: by handle, URL, tag, all.
@Suite struct RegistryTests {
    let client: Client

    init() throws {
        client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
    }

    /// A request the fixture answers after `seconds`: by default long past any wait of a test
    /// that cancels it, even one a loaded parallel pass resumes seconds late.
    func slow(_ key: String, _ extra: Parameters = [:], seconds: Double = 60) -> Request<JSON> {
        Request<JSON>("counted", query: ["key": key, "seconds": seconds].merging(extra) { $1 })
    }

    @Test func runningRequestsAreListedAndLeaveTheMomentTheyFinish() async throws {
        let key = Fixture.uniqueKey("list")
        let outcomes = Outcomes()
        client.send(slow(key, seconds: 0.5).tagged("home", "weather")) { outcomes.record(0, $0) }
        client.send(Request<JSON>("counted", method: .post, query: ["key": key, "seconds": 0.5])) { outcomes.record(1, $0) }
        let running = client.runningRequests
        #expect(running.count == 2)
        #expect(running.first?.tags == ["home", "weather"] && running.first?.method == .get)
        #expect(running.last?.method == .post)
        #expect(running.allSatisfy { $0.url?.path == "/counted" && $0.phase == .running })
        await outcomes.wait(for: 2)
        #expect(client.runningRequests.isEmpty)
    }

    @Test func finishedRequestsAreFreed() async throws {
        weak var weakHandle: RequestHandle?
        weak var weakLifecycle: RequestLifecycle?
        let outcomes = Outcomes()
        do {
            let handle = client.send(Request<JSON>("json")) { outcomes.record(0, $0) }
            weakHandle = handle
            weakLifecycle = handle.lifecycle
        }
        await outcomes.wait(for: 1)
        try await Task.sleep(milliseconds: 100)
        #expect(outcomes.of(0).count == 1)
        #expect(weakHandle == nil, "the handle outlived its request")
        #expect(weakLifecycle == nil, "the request state outlived its request")
    }

    @Test func cancelByExactURLMatchesAnyQueryOrderButNotOtherQueries() async throws {
        let key = Fixture.uniqueKey("url")
        let outcomes = Outcomes()
        client.send(slow(key, ["page": 1])) { outcomes.record(0, $0) }
        client.send(slow(key, ["page": 2])) { outcomes.record(1, $0) }
        // Counted and checked right after each cancel returns (the registry changes inside it), so
        // a loaded pass that resumes this test late cannot blur which request was still running.
        let cancelled = client.cancel(url: "counted?page=1&seconds=60.0&key=\(key)")
        #expect(cancelled == 1)
        #expect(client.runningRequests.count == 1, "the other query must still be running")
        #expect(client.cancel(url: "counted", matching: .ignoringQuery) == 1)
        #expect(client.cancel(url: "counted", matching: .ignoringQuery) == 0)
        await outcomes.wait(for: 2)
        #expect(outcomes.of(0).first?.failure == .cancelled(.explicit))
        #expect(outcomes.of(1).first?.failure == .cancelled(.explicit))
    }

    @Test func cancelByTagCancelsEveryRequestCarryingIt() async throws {
        let key = Fixture.uniqueKey("tag")
        let outcomes = Outcomes()
        client.send(slow(key).tagged("home")) { outcomes.record(0, $0) }
        client.send(slow(key).tagged("home", "favourites")) { outcomes.record(1, $0) }
        client.send(slow(key).tagged("detail")) { outcomes.record(2, $0) }
        #expect(client.cancel(tag: "home") == 2)
        #expect(client.runningRequests.map(\.tags) == [["detail"]])
        #expect(client.cancelAll() == 1)
        #expect(client.runningRequests.isEmpty)
        await outcomes.wait(for: 3)
        #expect((0..<3).allSatisfy { outcomes.of($0).map(\.failure) == [.cancelled(.explicit)] }, "\(outcomes.all)")
    }

    @Test func silentCancellationDeliversNothingAndAPerRequestOverrideReports() async throws {
        let silent = Client(baseURL: try TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.reportsCancellation = false
        }
        let key = Fixture.uniqueKey("silent")
        let outcomes = Outcomes()
        let quiet = silent.send(slow(key)) { outcomes.record(0, $0) }
        var loud = slow(key)
        loud.reportsCancellation = true
        silent.send(loud) { outcomes.record(1, $0) }
        quiet.cancel()
        #expect(silent.cancelAll() == 1)
        try await Task.sleep(milliseconds: 400)
        #expect(outcomes.of(0).isEmpty)
        #expect(outcomes.of(1).first?.failure == .cancelled(.explicit))
        #expect(quiet.isCancelled && quiet.isFinished)
        #expect(silent.runningRequests.isEmpty)
        // The async API cannot be silent: it throws.
        let task = Task { try await silent.send(slow(key)) }
        try await Task.sleep(milliseconds: 100)
        task.cancel()
        guard case .failure(let error as TernError) = await task.result else { Issue.record("expected an error"); return }
        #expect(error.isCancelled)
    }
}
