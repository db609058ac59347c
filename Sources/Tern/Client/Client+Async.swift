import Foundation

extension Client {
    /// Sends a request and returns its response.
    ///
    /// A progress handler (`Request.progress`) runs on the request's or the client's callback
    /// queue (the main queue by default), every call of it before this returns.
    ///
    /// Cancelling the calling `Task` cancels the request, which then throws
    /// `TernError.cancelled(.explicit)`. For a cache-then-network request this returns the first
    /// acceptable response: a fresh cached one if there is one (the network call then goes on and
    /// refreshes the cache), else the network's. Use `responses(for:)` to get both.
    /// - Parameter convertible: What to send and how to decode the answer.
    /// - Returns: The response with the decoded value.
    /// - Throws: `TernError`, for every failure.
    public func send<Value>(_ convertible: some RequestConvertible<Value>) async throws(TernError) -> Response<Value> {
        let slot = HandleSlot()
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Response<Value>, any Error>) in
                    // Made here, not above: a request kept across the suspension would enlarge
                    // this function's async frame on every send.
                    let request = convertible.makeRequest()
                    let handle: RequestHandle
                    // Progress goes where the request or the client says (the main queue by
                    // default). The result resumes the task where it is produced, unless there is
                    // progress: then from that queue, after the last progress call.
                    let progressQueue = callbackQueue(for: request)
                    let queue: CallbackQueue = request.progress == nil ? .immediate : progressQueue
                    if cachePolicy(for: request).read == .cacheThenNetwork {
                        let once = ResumeOnce(continuation)
                        handle = perform(
                            request, queue: queue, progressQueue: progressQueue, alwaysReport: true,
                            cacheHit: { _, response in once.resume(with: .success(response)) },
                            completion: { _, result in once.resume(with: result) })
                    } else {
                        // One callback only: no first-of-two bookkeeping on the common path.
                        handle = perform(request, queue: queue, progressQueue: progressQueue, alwaysReport: true) { _, result in
                            continuation.resume(with: result)
                        }
                    }
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

/// Resumes a continuation with the first result only (a cache hit, or the final result).
private final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation: Locked<CheckedContinuation<Response<Value>, any Error>?>

    init(_ continuation: CheckedContinuation<Response<Value>, any Error>) {
        self.continuation = Locked(continuation)
    }

    func resume(with result: Result<Response<Value>, TernError>) {
        let continuation = continuation.withLock { continuation in
            defer { continuation = nil }
            return continuation
        }
        continuation?.resume(with: result.mapError { $0 as any Error })
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

#if canImport(Glibc) || canImport(Musl)
extension Client {
    /// The event-loop thread of the client's transport as a Swift task executor, where it has one
    /// (the libcurl transport, Linux's default), else nil. Sequential request-heavy code under
    /// `withTaskExecutorPreference(client.taskExecutor)` sends and resumes without thread hops;
    /// see `CurlTransport.taskExecutor` for what that costs the transport's other transfers.
    public var taskExecutor: (any TaskExecutor)? { (transport as? CurlTransport)?.taskExecutor }
}
#endif
