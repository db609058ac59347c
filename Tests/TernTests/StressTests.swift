import Foundation
import Testing
@testable import Tern

/// Many concurrent requests with random cancels: every one ends exactly once. Also run under
/// ThreadSanitizer by scripts/test.sh (`--filter StressTests`).
@Suite struct StressTests {
    @Test func thousandConcurrentRequestsEachGetExactlyOneCallback() async throws {
        let client = Client(baseURL: try TestServers.fixture()) {
            $0.callbackQueue = .queue(DispatchQueue(label: "stress", attributes: .concurrent))
            $0.maximumConnectionsPerHost = 16
            $0.timeout = 30
        }
        let count = 1_000
        let callbacks = Locked([Int](repeating: 0, count: count))
        let outcomes = Locked((success: 0, cancelled: 0, other: 0))
        var generator = SeededGenerator(seed: 42)
        let cancelIndices = Set((0..<count).filter { _ in Int.random(in: 0..<4, using: &generator) == 0 })

        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let remaining = Locked(count)
            for index in 0..<count {
                let handle = client.send(Request<JSON>("json", query: ["n": index % 7])) { result in
                    callbacks.withLock { $0[index] += 1 }
                    outcomes.withLock {
                        switch result {
                        case .success: $0.success += 1
                        case .failure(let error) where error.isCancelled: $0.cancelled += 1
                        case .failure: $0.other += 1
                        }
                    }
                    if remaining.withLock({ $0 -= 1; return $0 }) == 0 { done.resume() }
                }
                if cancelIndices.contains(index) {
                    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int.random(in: 0...30))) { handle.cancel() }
                }
            }
        }
        // Give any stray second callback time to show up.
        try await Task.sleep(for: .milliseconds(300))
        #expect(callbacks.withLock { $0 }.allSatisfy { $0 == 1 })
        let totals = outcomes.withLock { $0 }
        #expect(totals.success + totals.cancelled == count, "unexpected failures: \(totals)")
        #expect(totals.cancelled <= cancelIndices.count)
    }

    /// Real traffic through a transport wrapper that, at the moment a response completes, sets a
    /// cancel of the same request going on another thread and then hands the completion on: the
    /// cancel and the completion truly race. Both must win sometimes, and each request ends once.
    @Test func concurrentCancelAndCompletionRacesNeverDoubleDeliver() async throws {
        let racing = RacingTransport(inner: URLSessionTransport(configuration: ClientConfiguration().makeSessionConfiguration()))
        let client = Client(baseURL: try TestServers.httpbin()) {
            $0.callbackQueue = .immediate
            $0.transport = racing
        }
        let calls = Counter()
        let cancelled = Counter()
        let rounds = 300
        await withTaskGroup(of: Void.self) { group in
            for round in 0..<rounds {
                group.addTask {
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        let handle = client.send(Request<Data>("bytes/64", query: ["round": round])) { result in
                            calls.increment()
                            if result.failure?.isCancelled == true { cancelled.increment() }
                            continuation.resume()
                        }
                        racing.onCompletion(of: round) { handle.cancel() }
                    }
                }
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(calls.count == rounds)
        #expect(cancelled.count > 0, "no cancel won a race")
        #expect(cancelled.count < rounds, "no completion won a race")
    }
}

/// Wraps a transport; when an exchange completes, it starts that request's racer on another
/// thread and hands the completion on at the same moment.
final class RacingTransport: Transport {
    private let inner: any Transport
    private let racers = Locked([Int: @Sendable () -> Void]())

    init(inner: any Transport) { self.inner = inner }

    /// Runs `racer` as the response of request `round` (its `round` query value) completes.
    func onCompletion(of round: Int, _ racer: @escaping @Sendable () -> Void) {
        racers.withLock { $0[round] = racer }
    }

    func start(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
        let round = URLComponents(url: request.urlRequest.url!, resolvingAgainstBaseURL: false)?
            .queryItems?.first { $0.name == "round" }?.value.flatMap(Int.init) ?? -1
        return inner.start(request) { [racers] event in
            if case .completed = event, let racer = racers.withLock({ $0.removeValue(forKey: round) }) {
                DispatchQueue.global().async(execute: racer)
            }
            events(event)
        }
    }

    func invalidate() { inner.invalidate() }
}
