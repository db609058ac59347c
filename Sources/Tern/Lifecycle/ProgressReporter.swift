import Foundation

/// Delivers one request's progress to its handler on the callback queue.
///
/// Updates are coalesced: while one delivery waits in the queue, newer counts replace the
/// pending ones instead of queueing more work, so a fast download on a busy main queue costs one
/// hop per turn of the queue, not one per chunk. A delivery queued before the completion runs
/// before it (same queue, FIFO; with `.immediate` both run inline in order) and carries the latest counts, so the last progress a caller sees
/// on a serial queue is the final one. Nothing is delivered once the request was cancelled or
/// timed out.
/// Thread safety: safe to use from any thread.
final class ProgressReporter: Sendable {
    private struct State {
        var upload: TransferProgress?
        var download: TransferProgress?
        var uploadChanged = false
        var downloadChanged = false
        var isScheduled = false
        var isStopped = false
    }

    private let handler: @Sendable (RequestHandle?, TransferProgress) -> Void
    private let queue: CallbackQueue
    private let state = Locked(State())
    /// The request reported on, for the handle delegates receive.
    private let owner = Locked(WeakCore())

    init(queue: CallbackQueue, handler: @escaping @Sendable (RequestHandle?, TransferProgress) -> Void) {
        self.queue = queue
        self.handler = handler
    }

    /// The reporter for `request`'s progress handler and observer, nil when it has neither.
    static func forRequest<Value>(_ request: Request<Value>, queue: CallbackQueue) -> ProgressReporter? {
        switch (request.progress, request.progressObserver) {
        case (nil, nil): nil
        case (let handler?, nil): ProgressReporter(queue: queue) { _, progress in handler(progress) }
        case (nil, let observer?): ProgressReporter(queue: queue, handler: observer)
        case (let handler?, let observer?):
            ProgressReporter(queue: queue) { handle, progress in
                handler(progress)
                observer(handle, progress)
            }
        }
    }

    /// Names the request reported on (its core calls this once it exists).
    func attach(_ core: RequestCore) {
        owner.withLock { $0.core = core }
    }

    /// A (new) response began: download counts restart, with its `Content-Length` as the total;
    /// a resumed download starts at the `resumedFrom` bytes already on disk, out of those plus the rest.
    func responseStarted(_ response: ResponseHead, resumedFrom: Int64 = 0) {
        let length = response.expectedContentLength
        // A compressed body's Content-Length counts compressed bytes; the chunks we count are not.
        let encoded = (response.value(forHTTPHeaderField: "Content-Encoding") ?? "identity").lowercased() != "identity"
        update { state in
            state.download = TransferProgress(
                direction: .download, completedBytes: resumedFrom,
                expectedBytes: length >= 0 && !encoded ? resumedFrom + length : nil)
            state.downloadChanged = true
        }
    }

    /// More of the response body arrived.
    func received(_ count: Int) {
        update { state in
            var progress = state.download ?? TransferProgress(direction: .download, completedBytes: 0, expectedBytes: nil)
            progress.completedBytes += Int64(count)
            state.download = progress
            state.downloadChanged = true
        }
    }

    /// The transport sent more of the request body.
    func sent(_ total: Int64, expected: Int64?) {
        update { state in
            state.upload = TransferProgress(direction: .upload, completedBytes: total, expectedBytes: expected)
            state.uploadChanged = true
        }
    }

    /// No more deliveries: the request was cancelled or timed out.
    func stop() {
        state.withLock { $0.isStopped = true }
    }

    private func update(_ change: (inout State) -> Void) {
        let schedule = state.withLock { state -> Bool in
            guard !state.isStopped else { return false }
            change(&state)
            defer { state.isScheduled = true }
            return !state.isScheduled
        }
        if schedule { queue.perform { [self] in deliver() } }
    }

    private func deliver() {
        let pending = state.withLock { state -> [TransferProgress] in
            state.isScheduled = false
            guard !state.isStopped else { return [] }
            defer { state.uploadChanged = false; state.downloadChanged = false }
            return [state.uploadChanged ? state.upload : nil, state.downloadChanged ? state.download : nil].compactMap { $0 }
        }
        guard !pending.isEmpty else { return }
        let handle = owner.withLock { $0.core }?.handle
        for progress in pending { handler(handle, progress) }
    }
}

/// A weak reference to a request's core.
struct WeakCore: Sendable {
    weak var core: RequestCore?
}
