import Foundation
import Testing
@testable import Tern

/// Cancelling through a handle or a `Task`, and invalidating a client.
@Suite struct CancellationTests {
    let client: Client

    init() throws {
        client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
    }

    @Test func cancellingARunningRequestDeliversOneCancelledError() async throws {
        let calls = Counter()
        let (error, handle): (TernError?, RequestHandle) = await withCheckedContinuation { continuation in
            let handle = Locked<RequestHandle?>(nil)
            let started = client.send(Request<JSON>("stall", query: ["seconds": 3])) { result in
                calls.increment()
                continuation.resume(returning: (result.failure, handle.withLock { $0! }))
            }
            handle.withLock { $0 = started }
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { started.cancel() }
        }
        #expect(error == .cancelled(.explicit))
        #expect(handle.isCancelled && handle.isFinished)
        handle.cancel()
        try await Task.sleep(milliseconds: 300)
        #expect(calls.count == 1)
    }

    @Test func cancellingRightAfterSendWins() async throws {
        let results = Locked<[Result<Response<JSON>, TernError>]>([])
        for _ in 0..<20 {
            // A slow answer: under load the test's thread can be held longer than a fast round trip.
            let handle = client.send(Request<JSON>("stall", query: ["seconds": 2])) { result in results.withLock { $0.append(result) } }
            handle.cancel()
            handle.cancel()
        }
        try await Task.sleep(milliseconds: 500)
        let all = results.withLock { $0 }
        #expect(all.count == 20)
        #expect(all.allSatisfy { $0.failure == .cancelled(.explicit) })
    }

    @Test func cancellingAfterCompletionIsANoOp() async throws {
        let calls = Counter()
        // The completion may run before `send` returns: whichever of the two comes second resumes.
        let handle: RequestHandle = await withCheckedContinuation { continuation in
            let state = Locked<(handle: RequestHandle?, isDone: Bool)>((nil, false))
            let sent = client.send(Request<JSON>("json")) { result in
                calls.increment()
                #expect(result.success != nil)
                let handle = state.withLock { state -> RequestHandle? in
                    state.isDone = true
                    return state.handle
                }
                if let handle { continuation.resume(returning: handle) }
            }
            let isDone = state.withLock { state -> Bool in
                state.handle = sent
                return state.isDone
            }
            if isDone { continuation.resume(returning: sent) }
        }
        handle.cancel()
        try await Task.sleep(milliseconds: 200)
        #expect(calls.count == 1)
        #expect(!handle.isCancelled)
        #expect(handle.phase == .finished)
    }

    @Test func cancellingTheTaskCancelsTheRequest() async throws {
        let endedAt = Locked<Date?>(nil)
        let task = Task {
            defer { endedAt.withLock { $0 = Date() } }
            return try await client.send(Request<JSON>("stall", query: ["seconds": 30]))
        }
        try await Task.sleep(milliseconds: 200)
        let cancelledAt = Date()
        task.cancel()
        let result = await task.result
        guard case .failure(let error as TernError) = result else { Issue.record("expected an error, got \(result)"); return }
        #expect(error == .cancelled(.explicit))
        let took = try #require(endedAt.withLock { $0 }).timeIntervalSince(cancelledAt)
        #expect(took < 10, "the 30 s stall must not be waited out (took \(took) s after cancel)")
    }

    @Test func anAlreadyCancelledTaskThrowsCancelledAtOnce() async throws {
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.send(Request<JSON>("stall", query: ["seconds": 5]))
        }
        let result = await task.result
        guard case .failure(let error as TernError) = result else { Issue.record("expected an error, got \(result)"); return }
        #expect(error.isCancelled)
    }

    @Test func invalidatingCancelsRequestsInFlightAndRefusesNewOnes() async throws {
        let client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
        let inFlight = Task { try await client.send(Request<JSON>("stall", query: ["seconds": 5])) }
        try await Task.sleep(milliseconds: 200)
        client.invalidate()
        client.invalidate()
        let result = await inFlight.result
        guard case .failure(let error as TernError) = result else { Issue.record("expected an error, got \(result)"); return }
        #expect(error == .cancelled(.clientInvalidated))
        #expect(client.isInvalidated)

        let later = await client.completionResult(Request<JSON>("json"))
        #expect(later.0.failure == .clientInvalidated)
        #expect(await client.pairResult(Request<JSON>("json")).failure == .clientInvalidated)
        #expect(await client.delegateResult(Request<JSON>("json")).failure == .clientInvalidated)
        await #expect(throws: TernError.clientInvalidated) { try await client.send(Request<JSON>("json")) }
    }

    @Test func aDeallocatedDelegateGetsNothingAndNothingCrashes() async throws {
        var recorder: RecordingDelegate? = RecordingDelegate()
        let calls = Counter()
        recorder?.onResult = { _ in calls.increment() }
        let handle = client.send(Request<JSON>("stall", query: ["seconds": 0.3]), delegate: recorder!)
        recorder = nil
        #expect(await eventually { handle.isFinished }, "the request ends although its delegate is gone")
        try await Task.sleep(milliseconds: 100)
        #expect(calls.count == 0)
    }
}

extension TernError: Equatable {
    /// Test-only equality: same case, same associated values where they are comparable.
    public static func == (lhs: TernError, rhs: TernError) -> Bool {
        switch (lhs, rhs) {
        case (.invalidRequest(let a), .invalidRequest(let b)): a == b
        case (.transport(let a), .transport(let b)): a.code == b.code
        case (.timedOut(let a), .timedOut(let b)): a == b
        case (.deadlineExceeded(let a), .deadlineExceeded(let b)): a == b
        case (.unacceptableStatus(let a, let x, _, _), .unacceptableStatus(let b, let y, _, _)): a == b && x == y
        case (.unacceptableContentType(let a, let x), .unacceptableContentType(let b, let y)): a == b && x == y
        case (.decoding(let a, let x), .decoding(let b, let y)): a == b && x == y
        case (.cancelled(let a), .cancelled(let b)): a == b
        case (.clientInvalidated, .clientInvalidated): true
        case (.cacheMiss(let a), .cacheMiss(let b)): a == b
        case (.redirectFailed(let a), .redirectFailed(let b)): a == b
        case (.responseTooLarge(let a), .responseTooLarge(let b)): a == b
        case (.business(let a, let x, let p), .business(let b, let y, let q)): a == b && x == y && p == q
        case (.failedAfterRetries(let a, let x), .failedAfterRetries(let b, let y)): a == b && x == y
        default: false
        }
    }
}
