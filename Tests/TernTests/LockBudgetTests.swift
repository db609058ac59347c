import Foundation
import Testing

@testable import Tern

/// What one request costs in takes of its own lock, counted by the lifecycle itself (debug builds).
@Suite struct LockBudgetTests {
    /// A GET that is redirected, fails once with a 503, and succeeds on its retry takes its
    /// lock at most 14 times from `send` to its callback: begin, start, the end of `send`; per
    /// exchange its number and its exchange; completing, waiting and resuming for the retry,
    /// completing again; the claim.
    @Test func aRedirectedAndRetriedGetTakesItsLockAtMost14Times() async throws {
        let client = try Client(baseURL: TestServers.fixture()) {
            $0.callbackQueue = .immediate
            // The retry waits 0.5 s: were the answer in before `send` returned (a thread of a
            // loaded machine preempted that long), its claim would wait for `send`, one take more.
            $0.retryPolicy = RetryPolicy(maxAttempts: 4, baseDelay: 0.5, jitter: 0)
        }
        let key = Fixture.uniqueKey("lock-budget")
        let request = Request<JSON>("redirect", query: ["to": "/flaky?key=\(key)&fail=1"])
        let handle = Locked<RequestHandle?>(nil)
        let result = await withCheckedContinuation { continuation in
            handle.withLock { $0 = client.send(request) { continuation.resume(returning: $0) } }
        }
        let response = try result.get()
        #expect(response.attempt == 3 && response.redirects.count == 1)
        let takes = try #require(handle.withLock { $0 }).lifecycle.lockTakes
        #expect(takes <= 14, "\(takes) takes")
    }
}
