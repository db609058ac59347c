import Foundation
import Testing
@testable import Tern

/// A request as several attempts: a serializer that refuses the first complete answer and a
/// retry policy that retries whatever fails force a second exchange of a full body, and
/// processing that may be slow leaves the transport's thread.
@Suite struct AttemptTests {
    /// A serializer of `Value` that refuses the first body it gets, then reads bodies as `read` does.
    static func refusingOnce<Value: Sendable>(_ read: @escaping @Sendable (Data) throws(TernError) -> Value) -> ResponseSerializer<Value> {
        let calls = Locked(0)
        return ResponseSerializer<Value>(acceptableContentTypes: nil, emptyValue: nil) { data, _ throws(TernError) in
            let call = calls.withLock {
                $0 += 1
                return $0
            }
            guard call > 1 else { throw .decoding(description: "refused once", body: data) }
            return try read(data)
        }
    }

    /// Retries every failure after `delay` seconds, whatever it was.
    static func retryingEverything(after delay: TimeInterval) -> RetryPolicy {
        RetryPolicy(maxAttempts: 2, decide: { _ in .retry(after: delay) })
    }

    @Test func aSecondAttemptDiscardsTheFirstBodyAndRestartsProgress() async throws {
        let key = Fixture.uniqueKey("second")
        let progressQueue = DispatchQueue(label: "attempt-progress")
        let client = Client(baseURL: try TestServers.fixture()) {
            $0.callbackQueue = .queue(progressQueue)
            $0.retryPolicy = Self.retryingEverything(after: 0.05)
        }
        let seen = Locked<[Int64]>([])
        let counted = try await client.send(
            Request("counted", query: ["key": key], serializer: Self.refusingOnce { data throws(TernError) in try JSON(data: data) }))
        #expect(counted.value["n"]?.int == 2, "the first attempt's body was discarded")
        #expect(counted.attempt == 2)

        // 8 chunks 120 ms apart: each attempt lasts many of the 100 ms between progress reports
        // of a buffered body, so each reports before it ends (4 chunks 20 ms apart could report
        // the second attempt only at its end under ThreadSanitizer, and 50 ms apart its first
        // report once came after the first attempt's last: no restart to see).
        let request = Request("slow-pattern", query: ["n": 32768, "chunk": 4096, "interval": 0.12], serializer: Self.refusingOnce { $0 })
            .onProgress { progress in if progress.direction == .download { seen.withLock { $0.append(progress.completedBytes) } } }
        let response = try await client.send(request)
        #expect(response.data == TestPattern.bytes(32768))
        let counts = seen.withLock { $0 }
        #expect(counts.last == 32768)
        let restarts = zip(counts, counts.dropFirst()).filter { $0.1 < $0.0 }
        #expect(restarts.count == 1, "download progress restarts once, with the second attempt: \(counts)")
    }

    @Test func cancellingBetweenAttemptsDeliversOneCancellationAndStartsNoOther() async throws {
        let key = Fixture.uniqueKey("gap")
        let client = Client(baseURL: try TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.retryPolicy = Self.retryingEverything(after: 30)
        }
        let outcomes = Outcomes()
        let request = Request(
            "counted", query: ["key": key], serializer: Self.refusingOnce { data throws(TernError) in try JSON(data: data) })
        let handle = client.send(request) { outcomes.record(0, $0) }
        let deadline = Date().addingTimeInterval(10)
        while handle.lifecycle.read(\.waitReason) != .beforeNextAttempt, Date() < deadline { try await Task.sleep(milliseconds: 10) }
        #expect(handle.lifecycle.read(\.waitReason) == .beforeNextAttempt)
        #expect(handle.phase == .running)
        handle.cancel()
        await outcomes.wait(for: 1)
        try await Task.sleep(milliseconds: 200)
        #expect(outcomes.of(0).map(\.failure) == [.cancelled(.explicit)])
        #expect(try await Fixture.count(key) == 1)
        #expect(client.runningRequests.isEmpty)
    }

    /// A slow serializer on one request must not hold back another response of the same client:
    /// the serializer waits for the other request's delivery, which can only come if it runs off
    /// the transport's (serial) thread.
    @Test func aSlowSerializerDoesNotDelayAnotherResponse() async throws {
        let client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
        let otherDelivered = DispatchSemaphore(value: 0)
        let sawOther = Locked<Bool?>(nil)
        let slow = ResponseSerializer<String>(acceptableContentTypes: nil, emptyValue: nil) { data, _ in
            sawOther.withLock { $0 = otherDelivered.wait(timeout: .now() + 5) == .success }
            Thread.sleep(forTimeInterval: 0.3)
            return String(decoding: data, as: UTF8.self)
        }
        let slowResult = Task { try await client.send(Request<String>("json", serializer: slow)) }
        // Signalled by the other request's own callback (`.immediate`: where it is delivered), not
        // by an awaiting task, which may wait for a cooperative thread while the suite runs.
        let otherResult = await withCheckedContinuation { continuation in
            client.send(Request<JSON>("counted", query: ["key": Fixture.uniqueKey("other"), "seconds": 0.2])) { result in
                otherDelivered.signal()
                continuation.resume(returning: result)
            }
        }
        _ = try await slowResult.value
        _ = try otherResult.get()
        #expect(sawOther.withLock { $0 } == true, "the other response was held back by the slow serializer")
    }

    @Test func asyncSendDeliversProgressOnTheCallbackQueue() async throws {
        let key = DispatchSpecificKey<Int>()
        let queue = DispatchQueue(label: "async-progress")
        queue.setSpecific(key: key, value: 7)
        let client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .queue(queue) }
        let calls = Locked((onQueue: 0, elsewhere: 0))
        let request = Request<Data>("slow-pattern", query: ["n": 65536, "chunk": 8192, "interval": 0.01]).onProgress { _ in
            let onQueue = DispatchQueue.getSpecific(key: key) == 7
            calls.withLock { onQueue ? ($0.onQueue += 1) : ($0.elsewhere += 1) }
        }
        _ = try await client.send(request)
        let (onQueue, elsewhere) = calls.withLock { $0 }
        #expect(onQueue > 0)
        #expect(elsewhere == 0)
    }

    @Test func theHandleAndTheResponseNameTheAttempt() async throws {
        let client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
        let outcomes = Outcomes()
        let handle = client.send(Request<JSON>("json")) { outcomes.record(0, $0) }
        await outcomes.wait(for: 1)
        #expect(handle.attempt == 1)
        #expect(outcomes.of(0).first?.success?.attempt == 1)
    }
}
