import Foundation

/// Delivers one request's progress to its handler on the callback queue.
///
/// Updates are coalesced: while one delivery waits, newer counts replace the pending ones instead
/// of queueing more work, and deliveries are at least `interval` apart (about 30 a second), so a
/// slow body of tiny chunks on an idle main queue costs a few dozen calls a second, not one per
/// chunk. The completion flushes what is pending first (`flush`): on the completion's queue the
/// last progress a caller sees is the final one (same queue, FIFO; with `.immediate` both run
/// inline in order). A progress that says nothing (0 of 0 bytes, or 0 of unknown) is not
/// delivered. Nothing is delivered once the request was cancelled or timed out.
/// Thread safety: safe to use from any thread.
final class ProgressReporter: Sendable {
    private struct State {
        var upload: TransferProgress?
        var download: TransferProgress?
        var uploadChanged = false
        var downloadChanged = false
        var isScheduled = false
        var isStopped = false
        /// When the last delivery ran (uptime nanoseconds); 0 before the first.
        var lastDelivery: UInt64 = 0
    }

    /// The shortest time between two deliveries: about 30 a second.
    static let interval: UInt64 = 33_000_000

    private let handler: @Sendable (RequestHandle?, TransferProgress) -> Void
    private let queue: CallbackQueue
    private let state = Locked(State())
    /// The request reported on, for the handle delegates receive.
    private let owner = Weak<RequestLifecycle>()

    init(queue: CallbackQueue, handler: @escaping @Sendable (RequestHandle?, TransferProgress) -> Void) {
        self.queue = queue
        self.handler = handler
    }

    /// The reporter for `request`'s progress handler and observer, nil when it has neither.
    static func forRequest<Value>(_ request: Request<Value>, queue: CallbackQueue) -> ProgressReporter? {
        let (handler, observer) = (request.progress, request.progressObserver)
        if handler == nil, observer == nil { return nil }
        return ProgressReporter(queue: queue) { handle, progress in
            handler?(progress)
            observer?(handle, progress)
        }
    }

    /// Names the request reported on (its lifecycle calls this once it exists).
    func attach(_ lifecycle: RequestLifecycle) {
        owner.object = lifecycle
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

    /// Delivers what is pending now, ahead of the completion the caller queues next.
    func flush() {
        let pending = state.withLock { $0.uploadChanged || $0.downloadChanged }
        if pending { queue.perform { [self] in deliver() } }
    }

    private func update(_ change: (inout State) -> Void) {
        let wait = state.withLock { state -> UInt64? in
            guard !state.isStopped else { return nil }
            change(&state)
            guard !state.isScheduled else { return nil }
            state.isScheduled = true
            let since = DispatchTime.now().uptimeNanoseconds &- state.lastDelivery
            return state.lastDelivery == 0 || since >= Self.interval ? 0 : Self.interval - since
        }
        guard let wait else { return }
        if wait == 0 {
            queue.perform { [self] in deliver() }
        } else if case .immediate = queue {
            // No timer: with `.immediate` its delivery would run on a timer thread, beside one
            // the transport's thread runs inline. The next update after the interval delivers
            // (updates come one at a time from one exchange), and the completion flushes.
            state.withLock { $0.isScheduled = false }
        } else {
            // On a queue, deliveries are serialized by it; the timer's joins them in order.
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(wait))) { [self] in
                queue.perform { [self] in deliver() }
            }
        }
    }

    private func deliver() {
        let pending = state.withLock { state -> [TransferProgress] in
            state.isScheduled = false
            guard !state.isStopped else { return [] }
            state.lastDelivery = DispatchTime.now().uptimeNanoseconds
            defer { state.uploadChanged = false; state.downloadChanged = false }
            return [state.uploadChanged ? state.upload : nil, state.downloadChanged ? state.download : nil].compactMap { $0 }
                .filter(\.saysSomething)
        }
        guard !pending.isEmpty else { return }
        let handle = owner.object?.handle
        for progress in pending { handler(handle, progress) }
    }
}

extension TransferProgress {
    /// Whether it tells a caller anything: not 0 bytes of 0, or of an unknown total.
    var saysSomething: Bool { completedBytes > 0 || (expectedBytes ?? 0) > 0 }
}
