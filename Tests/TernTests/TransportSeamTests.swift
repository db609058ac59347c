import Foundation
import Testing
@testable import Tern

/// The transport seam: another transport plugs in through the configuration alone, and the
/// client's guarantees hold whatever the transport's timing.
@Suite struct TransportSeamTests {
    /// Answers inside `start`, before `send` has even returned.
    struct SynchronousTransport: Transport {
        let body: Data
        func start(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
            let response = HTTPURLResponse(
                url: request.urlRequest.url!, statusCode: 200, httpVersion: nil,
                headerFields: ["Content-Type": "application/json"])!
            events(
                .head(ResponseHead(HTTPURLResponse(url: request.urlRequest.url!, statusCode: 401, httpVersion: nil, headerFields: nil)!)))
            events(.data(Data("discarded".utf8)))
            events(.head(ResponseHead(response)))
            for byte in body { events(.data(Data([byte]))) }
            events(.completed(nil))
            return NoTask()
        }
        func invalidate() {}
    }

    /// Never answers; records cancellation like a real transport would.
    // Sendable: `pending` is only touched under `lock`.
    final class SilentTransport: Transport, @unchecked Sendable {
        private let lock = NSLock()
        private var pending: [@Sendable (TransportEvent) -> Void] = []
        let cancels = Counter()
        func start(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
            lock.withLock { pending.append(events) }
            return CancelTask { [cancels] in
                cancels.increment()
                events(.completed(URLError(.cancelled)))
            }
        }
        func invalidate() {}
    }

    /// Holds every `start` until released, so a request can be cancelled before its transport starts.
    // Sendable: `gate` is a semaphore (thread-safe); `cancels` is a Counter (locked).
    final class GatedTransport: Transport, @unchecked Sendable {
        let gate = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        let cancels = Counter()
        func start(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
            entered.signal()
            gate.wait()
            return CancelTask { [cancels] in
                cancels.increment()
                events(.completed(URLError(.cancelled)))
            }
        }
        func invalidate() {}
    }

    struct NoTask: TransportTask { func cancel() {} }
    struct CancelTask: TransportTask {
        let action: @Sendable () -> Void
        func cancel() { action() }
    }

    @Test func aSynchronousTransportStillDeliversAfterSendReturnsAndResetsTheBodyPerResponse() async throws {
        let client = Client(baseURL: "http://stub.invalid") {
            $0.transport = SynchronousTransport(body: Data(#"{"ok": true}"#.utf8))
        }
        // On the main queue with main-queue delivery, "after send returns" is observable: a callback
        // run inline would log before "returned".
        let log = Locked<[String]>([])
        let response: Response<JSON> = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.main.async {
                client.send(Request<JSON>("x")) { result in
                    log.withLock { $0.append("callback") }
                    continuation.resume(with: result)
                }
                log.withLock { $0.append("returned") }
            }
        }
        #expect(response.json["ok"]?.bool == true)
        #expect(log.withLock { $0 } == ["returned", "callback"])
    }

    @Test func timeoutAndCancelReachTheTransportTask() async throws {
        let transport = SilentTransport()
        let client = Client(baseURL: "http://stub.invalid") {
            $0.transport = transport
            $0.callbackQueue = .immediate
        }
        // Timed in the callback: the awaiting test itself may resume late on a loaded machine (it
        // once resumed 20 s late with the whole suite under ThreadSanitizer on two cores).
        let timedOut = await client.timedResult(Request<JSON>("x", timeout: 0.2))
        #expect(timedOut.0.failure == .timedOut(after: 0.2))
        #expect(timedOut.seconds < 15, "the transport never answers: only the deadline ends it")

        let task = Task { try await client.send(Request<JSON>("y")) }
        try await Task.sleep(milliseconds: 100)
        task.cancel()
        guard case .failure(let error as TernError) = await task.result else { Issue.record("expected cancellation"); return }
        #expect(error == .cancelled(.explicit))
        #expect(transport.cancels.count == 2)
    }

    @Test func cancellingBeforeTheTransportStartsEndsOnceAndStopsTheTaskWhenItArrives() async throws {
        let transport = GatedTransport()
        let client = Client(baseURL: "http://stub.invalid") {
            $0.transport = transport
            $0.callbackQueue = .immediate
        }
        let outcomes = Outcomes()
        let sent = Locked<RequestHandle?>(nil)
        // Send on another thread: it blocks inside the transport's `start`.
        DispatchQueue.global().async {
            let handle = client.send(Request<JSON>("x")) { outcomes.record(0, $0) }
            sent.withLock { $0 = handle }
        }
        await withCheckedContinuation { (entered: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                transport.entered.wait(); entered.resume()
            }
        }
        // The request is registered but its transport has not started: cancel it now.
        #expect(client.runningRequests.count == 1)
        #expect(client.cancelAll() == 1)
        transport.gate.signal()
        await outcomes.wait(for: 1)
        while sent.withLock({ $0 }) == nil { try await Task.sleep(milliseconds: 5) }
        try await Task.sleep(milliseconds: 100)
        #expect(outcomes.of(0).map(\.failure) == [.cancelled(.explicit)])
        #expect(transport.cancels.count == 1, "the task that arrived after the cancel must be cancelled")
        #expect(client.runningRequests.isEmpty)
    }

    /// Refuses every request, as an invalidated transport does.
    struct RefusingTransport: Transport {
        func start(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? { nil }
        func invalidate() {}
    }

    @Test(arguments: [RepeatStrategy.allow, .share])
    func aRefusingTransportEndsRequestsAsInvalidated(strategy: RepeatStrategy) async {
        let client = Client(baseURL: "http://stub.invalid") {
            $0.transport = RefusingTransport()
            $0.callbackQueue = .immediate
        }
        let result = await client.completionResult(Request<JSON>("x").repeating(strategy))
        #expect(result.0.failure == .clientInvalidated)
        #expect(client.runningRequests.isEmpty)
        #expect(client.exchanges.isIdle)
    }
}
