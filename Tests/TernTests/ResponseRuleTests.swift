import Foundation
import Testing
@testable import Tern

/// Response rules against the fixture server: a 200 with a business error code becomes a typed
/// failure in every callback style, and requests stopped at a `RestartGate` ("login required")
/// are sent again on login or dropped on logout, each callback exactly once.
@Suite struct ResponseRuleTests {
    private func client(_ configure: (inout ClientConfiguration) -> Void = { _ in }) throws -> Client {
        try Client(baseURL: TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.hooks.rules.append(BusinessRule())
            configure(&$0)
        }
    }

    private let expired = Request<JSON>("envelope", query: ["code": 1001, "message": "token expired"])

    @Test func aBusinessCodeBecomesATypedFailureInEveryStyle() async throws {
        let client = try client()
        let viaAsync = await #expect(throws: TernError.self) { try await client.send(expired) }
        let (viaClosure, _) = await client.completionResult(expired)
        let viaPair = await client.pairResult(expired)
        let viaDelegate = await client.delegateResult(expired)
        let errors = [viaAsync, viaClosure.failure, viaPair.failure, viaDelegate.failure]
        for error in errors {
            guard case .business(let code, let message, let body)? = error else {
                Issue.record("expected a business error, got \(String(describing: error))")
                continue
            }
            #expect(code == 1001 && message == "token expired")
            #expect(String(decoding: body, as: UTF8.self).contains("Beijing"))
        }
        // Success codes pass untouched.
        #expect(try await client.send(Request<JSON>("envelope", query: ["code": 0])).value["data"]?["city"]?.string == "Beijing")
    }

    @Test func aBusinessFailureIsNeitherRetriedNorStored() async throws {
        let key = Fixture.uniqueKey("business-cache")
        let client = try client {
            $0.retryPolicy = .exponential(maxAttempts: 3, baseDelay: 0.01)
            $0.cachePolicy = CachePolicy(read: .cacheElseNetwork, write: .memory, maxAge: 60)
            $0.cacheStorage.directory = FileManager.default.temporaryDirectory.appendingPathComponent(key)
        }
        let request = Request<JSON>("cached", query: ["key": key, "code": 7])
        for _ in 0..<2 {
            let error = await #expect(throws: TernError.self) { try await client.send(request) }
            #expect(error?.businessError?.code == 7)
        }
        #expect(try await Fixture.count(key) == 2)
    }

    @Test func aRuleCanAcceptAStatusValidationWouldRefuse() async throws {
        let client = try client {
            $0.hooks.rules = []
            $0.hooks.rule("known-404") { $0.statusCode == 404 ? .succeed : .proceed }
        }
        let response = try await client.send(Request<JSON>("no-such-fixture"))
        #expect(response.statusCode == 404)
        #expect(response.value["error"]?.string == "no such fixture")
        let plain = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
        let error = await #expect(throws: TernError.self) { try await plain.send(Request<JSON>("no-such-fixture")) }
        #expect(error?.statusCode == 404)
    }

    /// Ten requests that hit "login required" wait at the gate and succeed after the login.
    @Test func heldRequestsAreSentAgainWhenTheGateRestartsThem() async throws {
        let login = RestartGate()
        let key = Fixture.uniqueKey("session")
        let client = try client { $0.hooks.rules = [BusinessRule(holding: [1002: login])] }
        let outcomes = Outcomes()
        // A 10 s deadline: room for a loaded machine to get the first answers (6 s was once too
        // little for one of ten on URLSession in the loaded parallel pass); then the requests
        // stay held until well past it, counted from the send.
        let deadline = 10.0
        let sent = Date()
        let handles = (0..<10).map { index in
            client.send(Request<JSON>("session", query: ["key": key], timeout: deadline)) { outcomes.record(index, $0) }
        }
        try await waitUntil { login.heldCount == 10 }
        // Held past the request's deadline: the deadline is suspended while held.
        let heldFor = deadline + 0.5 - Date().timeIntervalSince(sent)
        if heldFor > 0 { try await Task.sleep(milliseconds: UInt64(heldFor * 1000)) }
        #expect(outcomes.all.isEmpty)
        #expect(handles.allSatisfy { $0.phase == .running })
        _ = try await client.send(Request<JSON>("login", query: ["key": key]))
        login.restartAll()
        await outcomes.wait(for: 10)
        try await Task.sleep(milliseconds: 100)
        for index in 0..<10 {
            let results = outcomes.of(index)
            #expect(results.count == 1)
            #expect(try results.first?.get().value["data"]?["n"]?.int ?? 0 > 10)
        }
        #expect(try await Fixture.count(key) == 20)
        #expect(client.runningRequests.isEmpty)
    }

    @Test func heldRequestsFailOnceWhenTheGateDropsThemAndCancelledOnesLeaveIt() async throws {
        let login = RestartGate()
        let key = Fixture.uniqueKey("logout")
        let client = try client { $0.hooks.rules = [BusinessRule(holding: [1002: login])] }
        let outcomes = Outcomes()
        let handles = (0..<10).map { index in client.send(Request<JSON>("session", query: ["key": key])) { outcomes.record(index, $0) } }
        try await waitUntil { login.heldCount == 10 }
        handles[0].cancel()
        #expect(login.heldCount == 9)
        login.dropAll(with: .business(code: 1002, message: "logged out", body: Data()))
        await outcomes.wait(for: 10)
        login.restartAll()  // nothing is held any more: no second callback
        try await Task.sleep(milliseconds: 200)
        #expect(outcomes.of(0).count == 1 && outcomes.of(0).first?.failure?.isCancelled == true)
        for index in 1..<10 {
            #expect(outcomes.of(index).count == 1)
            #expect(outcomes.of(index).first?.failure?.businessError?.message == "logged out")
        }
        #expect(try await Fixture.count(key) == 10)
        #expect(client.runningRequests.isEmpty)
    }

    /// A gate is used again and again (every time a session expires): what it released is no
    /// longer held or counted, and the next round is held and released on its own.
    @Test func aGateReleasesWhatItHeldAndHoldsTheNextRoundAfresh() async throws {
        let login = RestartGate()
        let key = Fixture.uniqueKey("gate-reuse")
        let client = try client { $0.hooks.rules = [BusinessRule(holding: [1002: login])] }
        let outcomes = Outcomes()
        for index in 0..<3 { _ = client.send(Request<JSON>("session", query: ["key": key])) { outcomes.record(index, $0) } }
        try await waitUntil { login.heldCount == 3 }
        _ = try await client.send(Request<JSON>("login", query: ["key": key]))
        login.restartAll()
        #expect(login.heldCount == 0, "released requests are still counted while they run again")
        await outcomes.wait(for: 3)
        _ = try await client.send(Request<JSON>("logout", query: ["key": key]))
        for index in 3..<5 { _ = client.send(Request<JSON>("session", query: ["key": key])) { outcomes.record(index, $0) } }
        try await waitUntil { login.heldCount == 2 }
        _ = try await client.send(Request<JSON>("login", query: ["key": key]))
        login.restartAll()
        #expect(login.heldCount == 0)
        await outcomes.wait(for: 5)
        try await Task.sleep(milliseconds: 100)
        for index in 0..<5 {
            #expect(outcomes.of(index).count == 1, "request \(index) ended \(outcomes.of(index).count) times")
            #expect(outcomes.of(index).first?.failure == nil)
        }
    }

    /// Waits up to 30 s: ten requests to the fixture took more than 10 s to be answered in the
    /// loaded parallel pass on URLSession.
    private func waitUntil(_ condition: @Sendable () -> Bool) async throws {
        if !(await eventually(within: 30, condition)) { Issue.record("condition never became true") }
    }
}
