import Foundation

/// A request already running, for `await` callers who follow its progress: `progress` is an
/// async sequence of its upload and download progress (coalesced: a slow reader sees the latest
/// counts, never stale ones), ending when the request ends; `response` waits for the outcome.
/// Make one with `Client.transfer(_:)`.
/// ```swift
/// let transfer = client.transfer(Request<JSON>("upload", method: .post, body: .file(video)))
/// for await step in transfer.progress { print(step.fractionCompleted ?? 0) }
/// let reply = try await transfer.response
/// ```
/// Thread safety: safe to use from any thread and task.
public final class Transfer<Value: Sendable>: Sendable {
    /// The request, to cancel it or ask where it stands.
    public let handle: RequestHandle
    /// Progress in both directions, as `Request.progress` reports it; finishes with the request.
    public let progress: AsyncStream<TransferProgress>

    private struct State {
        var result: Result<Response<Value>, TernError>?
        var waiters: [CheckedContinuation<Response<Value>, any Error>] = []
    }
    private let state: Locked<State>

    init(client: Client, request: Request<Value>) {
        var continuation: AsyncStream<TransferProgress>.Continuation?
        progress = AsyncStream(TransferProgress.self, bufferingPolicy: .bufferingNewest(8)) { continuation = $0 }
        let updates = continuation
        let state = Locked(State())
        self.state = state
        var request = request
        let ownHandler = request.progress
        request.progress = { step in
            ownHandler?(step)
            updates?.yield(step)
        }
        request.reportsCancellation = true
        handle = client.send(request, queue: .immediate) { result in
            updates?.finish()
            let waiters = state.withLock { state -> [CheckedContinuation<Response<Value>, any Error>] in
                state.result = result
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume(with: result) }
        }
    }

    /// The response, once the request ends; cancelling the waiting task cancels the request.
    /// - Throws: `TernError`, for every failure.
    public var response: Response<Value> {
        get async throws(TernError) {
            if let result = state.withLock({ $0.result }) { return try result.get() }
            do {
                return try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Response<Value>, any Error>) in
                        let ready = state.withLock { state -> Result<Response<Value>, TernError>? in
                            if state.result == nil { state.waiters.append(continuation) }
                            return state.result
                        }
                        if let ready { continuation.resume(with: ready) }
                    }
                } onCancel: { [handle] in
                    handle.cancel()
                }
            } catch let error as TernError {
                throw error
            } catch {
                throw .cancelled(.explicit)
            }
        }
    }

    /// Cancels the request (see `RequestHandle.cancel()`).
    public func cancel() {
        handle.cancel()
    }
}
