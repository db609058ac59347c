import Foundation
import Testing
@testable import Tern

/// Many concurrent requests with random cancels: every one ends exactly once. Also run under
/// ThreadSanitizer by scripts/test.sh (`--filter StressTests`).
@Suite struct StressTests {
    @Test func thousandConcurrentRequestsEachGetExactlyOneCallback() async throws {
        let client = Client(baseURL: try TestServers.fixture()) {
            $0.callbackQueue = .queue(DispatchQueue(label: "stress", attributes: .concurrent))
            $0.transportSettings.maximumConnectionsPerHost = 16
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
                    if remaining.withLock({
                        $0 -= 1; return $0
                    }) == 0 {
                        done.resume()
                    }
                }
                if cancelIndices.contains(index) {
                    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(Int.random(in: 0...30))) { handle.cancel() }
                }
            }
        }
        // Give any stray second callback time to show up.
        try await Task.sleep(milliseconds: 300)
        #expect(callbacks.withLock { $0 }.allSatisfy { $0 == 1 })
        let totals = outcomes.withLock { $0 }
        #expect(totals.success + totals.cancelled == count, "unexpected failures: \(totals)")
        #expect(totals.cancelled <= cancelIndices.count)
    }

    /// Real traffic through a transport wrapper that cancels each request at the moment its
    /// response completes, in three orders: the cancel just before the completion reaches Tern, just
    /// after it (the result then waits in its callback queue, held until the cancel returns), and
    /// at the same time on another thread. The first two must end cancelled; every request ends
    /// exactly once (and ThreadSanitizer watches the third).
    @Test func concurrentCancelAndCompletionRacesNeverDoubleDeliver() async throws {
        let racing = RacingTransport(inner: URLSessionTransport(configuration: ClientConfiguration().makeSessionConfiguration()))
        let client = Client(baseURL: try TestServers.httpbin()) { $0.transport = racing }
        let rounds = 300
        let outcomes = Outcomes()
        await withTaskGroup(of: Void.self) { group in
            for round in 0..<rounds {
                group.addTask {
                    let held = DispatchQueue(label: "race-\(round)")
                    held.suspend()
                    let handle = Locked<RequestHandle?>(nil)
                    let stored = DispatchSemaphore(value: 0)
                    let order = RacingTransport.Order.allCases[round % 3]
                    racing.onCompletion(of: round, order) {
                        _ = stored.wait(timeout: .now() + 5)
                        handle.withLock { $0 }?.cancel()
                        held.resume()
                    }
                    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                        var request = Request<JSON>("get", query: ["round": round])
                        request.callbackQueue = .queue(held)
                        let sent = client.send(request) { result in
                            outcomes.record(round, result)
                            continuation.resume()
                        }
                        handle.withLock { $0 = sent }
                        stored.signal()
                    }
                }
            }
        }
        try await Task.sleep(milliseconds: 200)
        let all = outcomes.all
        #expect(all.count == rounds && all.values.allSatisfy { $0.count == 1 })
        let ordered = (0..<rounds).filter { $0 % 3 != 2 }
        let completedAnyway = ordered.filter { all[$0]?.first?.failure != .cancelled(.explicit) }
        #expect(completedAnyway.isEmpty, "a result was delivered after its cancel: rounds \(completedAnyway.prefix(5))")
    }
}

/// Wraps a transport; when an exchange completes, it runs that request's racer before, after,
/// or at the same time as it hands the completion on.
final class RacingTransport: Transport {
    enum Order: CaseIterable { case cancelThenComplete, completeThenCancel, together }

    private let inner: any Transport
    private let racers = Locked([Int: (Order, @Sendable () -> Void)]())

    init(inner: any Transport) { self.inner = inner }

    /// Runs `racer` in `order` with the completion of request `round` (its `round` query value).
    func onCompletion(of round: Int, _ order: Order, _ racer: @escaping @Sendable () -> Void) {
        racers.withLock { $0[round] = (order, racer) }
    }

    func start(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
        let round =
            URLComponents(url: request.urlRequest.url!, resolvingAgainstBaseURL: false)?
            .queryItems?.first { $0.name == "round" }?.value.flatMap(Int.init) ?? -1
        return inner.start(request) { [racers] event in
            guard case .completed = event, let (order, racer) = racers.withLock({ $0.removeValue(forKey: round) }) else {
                return events(event)
            }
            switch order {
            case .cancelThenComplete:
                racer()
                events(event)
            case .completeThenCancel:
                events(event)
                racer()
            case .together:
                let started = DispatchSemaphore(value: 0)
                Thread.detachNewThread {
                    started.signal()
                    racer()
                }
                started.wait()
                events(event)
            }
        }
    }

    func invalidate() { inner.invalidate() }
}
