import Foundation

extension Client {
    /// Sends a request and returns its response.
    ///
    /// Cancelling the calling `Task` cancels the request, which then throws
    /// `TernError.cancelled(.explicit)`.
    /// - Parameter request: What to send and how to decode the answer.
    /// - Returns: The response with the decoded value.
    /// - Throws: `TernError`, for every failure.
    public func send<Value>(_ request: Request<Value>) async throws(TernError) -> Response<Value> {
        let slot = HandleSlot()
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Response<Value>, any Error>) in
                    let handle = perform(request, queue: .immediate, alwaysReport: true) { _, result in continuation.resume(with: result) }
                    slot.store(handle)
                }
            } onCancel: {
                slot.cancel()
            }
        } catch let error as TernError {
            throw error
        } catch {
            throw .cancelled(.explicit)
        }
    }
}

/// Holds the handle of an async request so that a `Task` cancellation arriving before or after
/// the handle exists cancels it exactly once.
private final class HandleSlot: Sendable {
    private struct State {
        var handle: RequestHandle?
        var isCancelled = false
    }
    private let state = Locked(State())

    func store(_ handle: RequestHandle) {
        let cancelNow = state.withLock { state -> Bool in
            state.handle = handle
            return state.isCancelled
        }
        if cancelNow { handle.cancel() }
    }

    func cancel() {
        let handle = state.withLock { state -> RequestHandle? in
            state.isCancelled = true
            return state.handle
        }
        handle?.cancel()
    }
}
