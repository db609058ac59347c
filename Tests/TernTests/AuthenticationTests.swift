import Foundation
import Testing
@testable import Tern

/// Token refresh against the fixture's `/auth`: the server accepts only its newest token.
@Suite struct AuthenticationTests {
    /// Bearer tokens refreshed through the fixture; counts its refresh calls.
    struct FixtureTokens: Authenticator {
        let base: String
        let key: String
        var failing = false
        var delay: UInt64 = 0
        var bogus = false
        let calls = Counter()

        func apply(_ credential: String, to request: inout URLRequest) {
            request.setValue("Bearer \(credential)", forHTTPHeaderField: "Authorization")
        }

        func refresh(_ credential: String) async throws -> String {
            calls.increment()
            try await Task.sleep(milliseconds: delay)
            var query: Parameters = ["key": key]
            if failing { query["fail"] = 1 }
            let plain = Client(baseURL: base) { $0.callbackQueue = .immediate }
            let token = try await plain.send(Request<JSON>("auth/refresh", query: query)).value["token"]?.string ?? ""
            return bogus ? "bogus-\(token)" : token
        }
    }

    private func setUp(_ tokens: FixtureTokens, limit: Int = 3) throws -> Client {
        let auth = Authentication(tokens, credential: "stale", refreshLimit: limit, window: 60)
        return try Client(baseURL: TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.hooks.authenticate(with: auth)
        }
    }

    private func tokens(_ key: String) throws -> FixtureTokens { FixtureTokens(base: try TestServers.fixture(), key: key) }

    /// The deadline runs on while a request waits between attempts for a new token: a refresh
    /// that never ends does not hold the request past it.
    @Test func theDeadlineCoversTheWaitForANewToken() async throws {
        var slow = try tokens(Fixture.uniqueKey("deadline-refresh"))
        slow.delay = 30_000
        let client = try setUp(slow)
        var request = Request<JSON>("auth/protected", query: ["key": slow.key])
        request.deadline = 0.5
        let (result, seconds) = await client.timedResult(request)
        #expect(result.failure == .deadlineExceeded(after: 0.5), "\(result)")
        #expect(seconds < 10, "took \(seconds) s")
    }

    private func sendTwenty(_ client: Client, key: String) async -> Outcomes {
        let outcomes = Outcomes()
        for index in 0..<20 {
            client.send(Request<JSON>("auth/protected", query: ["key": key])) { outcomes.record(index, $0) }
        }
        await outcomes.wait(for: 20, seconds: 60)
        try? await Task.sleep(milliseconds: 100)
        return outcomes
    }

    @Test func twentyRefusedRequestsShareOneRefreshAndAllSucceed() async throws {
        let key = Fixture.uniqueKey("auth")
        var tokens = try tokens(key)
        tokens.delay = 100
        let outcomes = await sendTwenty(try setUp(tokens), key: key)
        #expect(tokens.calls.count == 1)
        #expect(try await Fixture.count(key + ":refresh") == 1)
        for index in 0..<20 {
            #expect(outcomes.of(index).count == 1)
            #expect((try? outcomes.of(index).first?.get())?.value["key"]?.string == key)
        }
    }

    @Test func aFailedRefreshFailsEveryWaitingRequest() async throws {
        let key = Fixture.uniqueKey("auth-fail")
        var tokens = try tokens(key)
        tokens.failing = true
        let outcomes = await sendTwenty(try setUp(tokens), key: key)
        #expect(tokens.calls.count == 1)
        for index in 0..<20 {
            let results = outcomes.of(index)
            #expect(results.count == 1)
            guard case .rejected(let hook, let error)? = results.first?.failure, case .refreshFailed? = error as? AuthenticationError else {
                Issue.record("request \(index): \(String(describing: results.first))")
                continue
            }
            #expect(hook == "Authentication")
        }
    }

    @Test func theLoopGuardStopsRefreshingACredentialTheServerNeverAccepts() async throws {
        let key = Fixture.uniqueKey("auth-loop")
        var tokens = try tokens(key)
        tokens.bogus = true
        let client = try setUp(tokens, limit: 2)
        let error = await #expect(throws: TernError.self) { try await client.send(Request<JSON>("auth/protected", query: ["key": key])) }
        guard case .rejected(_, let underlying)? = error?.lastFailure,
            case .tooManyRefreshes(let count, _)? = underlying as? AuthenticationError
        else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(count == 2)
        #expect(error?.attempts == 3)
        #expect(tokens.calls.count == 2)
    }

    @Test func requestsSentDuringARefreshWaitForTheNewCredential() async throws {
        let key = Fixture.uniqueKey("auth-wait")
        var tokens = try tokens(key)
        tokens.delay = 400
        let client = try setUp(tokens)
        let first = Task { try await client.send(Request<JSON>("auth/protected", query: ["key": key])) }
        // Wait until the first got its 401 and the refresh is under way.
        let deadline = Date().addingTimeInterval(20)
        while tokens.calls.count == 0, Date() < deadline { try await Task.sleep(milliseconds: 5) }
        let second = try await client.send(Request<JSON>("auth/protected", query: ["key": key]))
        #expect(second.attempt == 1)
        #expect(try await first.value.attempt == 2)
        #expect(try await Fixture.count(key + ":401") == 1)
        #expect(tokens.calls.count == 1)
    }
}
