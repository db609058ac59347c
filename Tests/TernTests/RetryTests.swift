import Foundation
import Testing
@testable import Tern

/// Retries against the fixture's `/flaky` resource, which fails a set number of times (503 with
/// or without `Retry-After`, or a reset) and records when each request arrived.
@Suite struct RetryTests {
    private func client(_ policy: RetryPolicy) throws -> Client {
        try Client(baseURL: TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.retryPolicy = policy
        }
    }

    private func flaky(_ key: String, fail: Int, _ extra: Parameters = [:], method: HTTPMethod = .get) -> Request<JSON> {
        Request<JSON>("flaky", method: method, query: extra.merging(["key": key, "fail": fail]) { own, _ in own })
    }

    /// Seconds between the server's arrivals for `key`.
    private func gaps(_ key: String) async throws -> [Double] {
        let client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
        let times = try await client.send(Request<JSON>("flaky-times", query: ["key": key])).json["times"]?.array ?? []
        let seconds = times.compactMap(\.double)
        return zip(seconds, seconds.dropFirst()).map { $1 - $0 }
    }

    @Test func aServiceUnavailableIsRetriedUntilItAnswers() async throws {
        let key = Fixture.uniqueKey("retry")
        let response = try await client(.exponential(maxAttempts: 4, baseDelay: 0.05)).send(flaky(key, fail: 2))
        #expect(response.json["n"]?.int == 3)
        #expect(response.attempt == 3)
        #expect(try await Fixture.count(key) == 3)
    }

    /// Without `Retry-After` the waits double: 0.15 s, 0.3 s, 0.6 s (no jitter), measured at the
    /// server between arrivals. Only lower bounds: a loaded machine lengthens any gap, and a
    /// constant or linear backoff already falls short of the second or third.
    @Test func backoffDoublesBetweenAttempts() async throws {
        let key = Fixture.uniqueKey("backoff")
        let response = try await client(RetryPolicy(maxAttempts: 4, baseDelay: 0.15, jitter: 0)).send(flaky(key, fail: 3))
        #expect(response.attempt == 4)
        let gaps = try await gaps(key)
        try #require(gaps.count == 3)
        #expect(gaps[0] >= 0.15 && gaps[1] >= 0.3 && gaps[2] >= 0.6, "\(gaps)")
    }

    @Test func attemptsStopAtTheLimitWithTheLastFailure() async throws {
        let key = Fixture.uniqueKey("exhausted")
        let client = try client(.exponential(maxAttempts: 3, baseDelay: 0.05))
        let outcomes = Outcomes()
        let handle = client.send(flaky(key, fail: 10)) { outcomes.record(0, $0) }
        await outcomes.wait(for: 1)
        #expect(outcomes.of(0).first?.failure?.statusCode == 503)
        #expect(handle.attempt == 3)
        #expect(try await Fixture.count(key) == 3)
    }

    @Test func retryAfterInSecondsIsHonoured() async throws {
        let key = Fixture.uniqueKey("after-seconds")
        _ = try await client(.exponential(baseDelay: 0.01)).send(flaky(key, fail: 1, ["retry_after": 1]))
        let gaps = try await gaps(key)
        #expect(gaps.count == 1 && gaps[0] >= 0.9, "waited \(gaps)")
    }

    @Test func retryAfterAsAnHTTPDateIsHonoured() async throws {
        let key = Fixture.uniqueKey("after-date")
        _ = try await client(.exponential(baseDelay: 0.01)).send(flaky(key, fail: 1, ["retry_after": "date:2"]))
        let gaps = try await gaps(key)
        // The date has one-second precision: two seconds ahead is at least one.
        #expect(gaps.count == 1 && gaps[0] >= 0.9, "waited \(gaps)")
    }

    /// A `Retry-After` longer than the policy's longest wait, or one that does not fit in the
    /// time left, is not waited for: the server's answer is delivered at once, its headers with it
    /// (inside `.failedAfterRetries` when attempts were made).
    @Test(arguments: TransportKind.all, ["beyond-max-delay", "beyond-deadline", "beyond-deadline-later"])
    func aRetryAfterThatCannotBeWaitedForEndsWithTheServersAnswer(over transport: TransportKind, _ situation: String) async throws {
        let key = Fixture.uniqueKey("retry-after-\(situation)")
        let client = try Client(baseURL: TestServers.fixture()) {
            $0.callbackQueue = .immediate
            // 30 s: a loaded parallel pass took 2 s to answer, and over 10 s under ThreadSanitizer.
            $0.deadline = situation == "beyond-max-delay" ? nil : 30
            $0.retryPolicy = RetryPolicy(maxAttempts: 3, baseDelay: 0.01, maxDelay: situation == "beyond-max-delay" ? 5 : 3600)
            transport.configure(&$0)
        }
        // "beyond-max-delay": a day, over the 5 s cap. "beyond-deadline": two minutes, within the
        // cap (3,600 s) but not within the 30 s left, so only the deadline refuses it;
        // "beyond-deadline-later": the first 503 asks for 0 s, the second for those two minutes.
        let wait = situation == "beyond-max-delay" ? 86400 : 120
        let extra: Parameters =
            situation == "beyond-deadline-later" ? ["retry_after": 0, "then_retry_after": wait] : ["retry_after": wait]
        // No time bound: a wait into the deadline would end as .timedOut, a capped wait would
        // make another attempt; either fails the checks below. Waiting out the Retry-After
        // ends the test after 45 s instead.
        let outcomes = Outcomes()
        let handle = client.send(flaky(key, fail: 5, extra)) { outcomes.record(0, $0) }
        await outcomes.wait(for: 1, seconds: 45)
        handle.cancel()
        let error = try #require(outcomes.of(0).first?.failure)
        #expect(error.statusCode == 503 && error.responseHeader("Retry-After") == "\(wait)", "\(error)")
        let attempts = situation == "beyond-deadline-later" ? 2 : 1
        #expect(error.attempts == (attempts > 1 ? attempts : nil))
        #expect(try await Fixture.count(key) == attempts)
    }

    @Test func postIsNotRetriedUnlessTheCallerOptsIn() async throws {
        let key = Fixture.uniqueKey("post")
        let result = try await client(.exponential(baseDelay: 0.01)).completionResult(flaky(key, fail: 1, method: .post))
        #expect(result.0.failure?.statusCode == 503)
        #expect(try await Fixture.count(key) == 1)

        let optedIn = Fixture.uniqueKey("post-opt-in")
        let response = try await client(RetryPolicy.exponential(baseDelay: 0.01).retryingAllMethods()).send(
            flaky(optedIn, fail: 1, method: .post))
        #expect(response.attempt == 2)
    }

    @Test func aResetConnectionIsRetried() async throws {
        let key = Fixture.uniqueKey("reset")
        let response = try await client(.exponential(baseDelay: 0.01)).send(flaky(key, fail: 1, ["mode": "reset"]))
        #expect(response.json["n"]?.int == 2)
    }

    @Test func cancellingDuringTheBackoffEndsTheRequestAtOnce() async throws {
        let key = Fixture.uniqueKey("backoff-cancel")
        let client = try client(RetryPolicy(maxDelay: 60))
        let outcomes = Outcomes()
        let handle = client.send(flaky(key, fail: 5, ["retry_after": 30])) { outcomes.record(0, $0) }
        let deadline = Date().addingTimeInterval(10)
        while handle.lifecycle.read(\.waitReason) != .beforeNextAttempt, Date() < deadline { try await Task.sleep(milliseconds: 10) }
        handle.cancel()
        await outcomes.wait(for: 1)
        #expect(outcomes.of(0).map(\.failure) == [.cancelled(.explicit)])
        #expect(try await Fixture.count(key) == 1)
        #expect(client.runningRequests.isEmpty)
    }

    @Test func aCustomDecisionComesFirst() async throws {
        let key = Fixture.uniqueKey("custom")
        let seen = Locked<[Int]>([])
        let policy = RetryPolicy(maxAttempts: 1) { context in
            seen.withLock { $0.append(context.attempt) }
            return context.error.statusCode == 418 ? .retry(after: 0) : nil
        }
        let response = try await client(policy).send(flaky(key, fail: 1, ["status": 418]))
        #expect(response.attempt == 2)
        #expect(seen.withLock { $0 } == [1])
    }

    @Test func anAttemptThatOutlivesItsOwnDeadlineIsRetried() async throws {
        let key = Fixture.uniqueKey("attempt-timeout")
        var policy = RetryPolicy.exponential(maxAttempts: 4, baseDelay: 0.01)
        policy.attemptTimeout = 3
        let client = try client(policy)
        // The first attempt stalls for 30 s: its own 3 s limit fails it, the next answers (or a
        // later one, when a loaded fixture server keeps the second past 3 s too).
        let response = try await client.send(flaky(key, fail: 1, ["mode": "stall", "seconds": 30]))
        #expect(response.attempt >= 2)
        #expect(response.json["n"]?.int == response.attempt)
        // The idle timeout fails the stalled attempt the same way, and it is retried.
        let idle = try Client(baseURL: TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.timeout = 4  // room for a loaded fixture server to answer the next attempts
            $0.retryPolicy = .exponential(maxAttempts: 4, baseDelay: 0.01)
        }
        #expect(try await idle.send(flaky(Fixture.uniqueKey("idle-timeout"), fail: 1, ["mode": "stall", "seconds": 30])).attempt >= 2)
        // The request's deadline ends the whole request, never retried.
        let whole = try Client(baseURL: TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.deadline = 0.5
            $0.retryPolicy = .exponential(maxAttempts: 3, baseDelay: 0.01)
        }
        let error = await #expect(throws: TernError.self) {
            try await whole.send(self.flaky(Fixture.uniqueKey("whole-timeout"), fail: 1, ["mode": "stall", "seconds": 3]))
        }
        guard case .deadlineExceeded(after: 0.5)? = error else {
            Issue.record("expected .deadlineExceeded(after: 0.5), got \(String(describing: error))")
            return
        }
    }

    @Test func failuresAfterSeveralAttemptsSayHowMany() async throws {
        let error = await #expect(throws: TernError.self) {
            try await self.client(.exponential(maxAttempts: 3, baseDelay: 0.01)).send(self.flaky(Fixture.uniqueKey("count"), fail: 5))
        }
        guard case .failedAfterRetries(let attempts, .unacceptableStatus(503, _, _, _))? = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        #expect(attempts == 3)
        #expect(error?.statusCode == 503 && error?.responseBody?.isEmpty == false)
    }
}
