import Foundation
import Testing
@testable import Tern

/// 10,000 requests with random repeat strategies, tags, silent cancellation and owners, cancelled
/// at random from several threads while owners are deallocated: every request ends in exactly one
/// terminal callback (none when it was cancelled silently) and the registry ends empty. Run under
/// ThreadSanitizer by scripts/test.sh. Run once plain and once with every other request behind a
/// redirect (301/302/307/308), so cancels also land between and during redirect attempts; every
/// tenth request fails once and is retried, so cancels also land in the wait between attempts;
/// every tenth has hooks of every kind (an async adapter, so cancels land while it runs), and
/// every fiftieth is stopped once at a `RestartGate` that restarts its requests every 20 ms.
@Suite struct LifecycleStressTests {
    @Test(arguments: [false, true])
    func tenThousandRequestsWithRandomStrategiesCancelsAndOwners(acrossRedirects: Bool) async throws {
        let client = Client(baseURL: try TestServers.fixture()) {
            $0.callbackQueue = .queue(DispatchQueue(label: "lifecycle-stress", attributes: .concurrent))
            $0.transportSettings.maximumConnectionsPerHost = 16
            $0.timeout = 60
        }
        let count = 10_000
        let callbacks = Locked([Int](repeating: 0, count: count))
        var generator = SeededGenerator(seed: 2026)
        let strategies: [RepeatStrategy] = [.allow, .cancelOlder, .ignoreNewer, .share]
        var owners: [Screen?] = (0..<64).map { _ in Screen() }
        var silent: [Bool] = []
        var handles: [RequestHandle] = []
        let gate = RestartGate()
        let gateOpener = Task {
            while !Task.isCancelled {
                try? await Task.sleep(milliseconds: 20)
                gate.restartAll()
            }
        }
        defer { gateOpener.cancel() }
        for index in 0..<count {
            var request =
                acrossRedirects && index % 2 == 0
                ? Request<JSON>("redirect", query: ["status": [301, 302, 307, 308][index % 4], "to": "/json?n=\(index % 10)"])
                : Request<JSON>("json", query: ["n": index % 10])
            request.repeatStrategy = strategies.randomElement(using: &generator)
            request.tags = ["t\(index % 7)"]
            let isSilent = Int.random(in: 0..<10, using: &generator) == 0
            request.reportsCancellation = !isSilent
            if Int.random(in: 0..<5, using: &generator) == 0, let owner = owners[index % owners.count] {
                request.lifetime = .owner(owner)
            }
            if index % 10 == 3 {
                // Fails once, then answers: a retry, and so a wait between attempts, in the mix.
                request = Request<JSON>("flaky", query: ["key": "stress-\(acrossRedirects)-\(index)", "fail": 1])
                request.retryPolicy = .exponential(maxAttempts: 3, baseDelay: 0.01)
                request.reportsCancellation = !isSilent
            }
            if index % 10 == 6 {
                request.hooks.rewriteParameters { $0.query["hooked"] = true }
                request.hooks.adapt { request, attempt in
                    if attempt.number % 2 == 1 { await Task.yield() }
                    return request
                }
                request.hooks.rule { _ in .proceed }
                request.hooks.preprocessFailure { error, _ in error }
            }
            if index % 50 == 7 {
                request.hooks.rule { $0.attempt == 1 ? .restart(after: gate) : .proceed }
            }
            if index % 1_000 == 500 {
                // A slow request whose owner is gone at once: the owner path is exercised however
                // fast the machine finishes the others before their owners are dropped.
                request = Request<JSON>("counted", query: ["key": "stress-orphan-\(index)", "seconds": 1])
                request.reportsCancellation = !isSilent
                request.lifetime = .owner(Screen())
            }
            silent.append(isSilent)
            handles.append(client.send(request) { _ in callbacks.withLock { $0[index] += 1 } })
            if index % 250 == 0 { owners[Int.random(in: 0..<owners.count, using: &generator)] = nil }
        }
        // Cancel at random from four threads at once, by handle and by tag.
        let allHandles = handles
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: 4) { thread in
                    var random = SeededGenerator(seed: UInt64(thread + 1))
                    for index in stride(from: thread, to: count, by: 4) where Int.random(in: 0..<3, using: &random) == 0 {
                        allHandles[index].cancel()
                        if index % 1_000 == 0 { client.cancel(tag: "t\(index % 7)") }
                    }
                }
                done.resume()
            }
        }
        owners.removeAll()
        let deadline = Date().addingTimeInterval(180)
        while !handles.allSatisfy(\.isFinished), Date() < deadline { try await Task.sleep(milliseconds: 50) }
        try await Task.sleep(milliseconds: 300)

        let delivered = callbacks.withLock { $0 }
        var wrong: [String] = []
        for index in 0..<count {
            let expected = silent[index] && handles[index].isCancelled ? 0 : 1
            if delivered[index] != expected {
                wrong.append("#\(index): \(delivered[index]) callbacks, expected \(expected) (\(handles[index]))")
            }
        }
        #expect(wrong.isEmpty, "\(wrong.count) requests ended wrongly, e.g. \(wrong.prefix(5))")
        #expect(client.runningRequests.isEmpty)
        #expect(client.exchanges.isIdle)
        #expect(handles.contains { $0.cancellationReason == .ownerReleased })
        #expect(handles.contains { $0.cancellationReason == .duplicate })
    }
}
