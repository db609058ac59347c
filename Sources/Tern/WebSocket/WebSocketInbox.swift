import Foundation

/// The messages received and not yet read, for `WebSocket.messages`: a reader waits here for the
/// next one; past `limit` bytes the connection stops reading until the reader catches up.
/// Thread safety: safe to use from any thread (one lock).
final class WebSocketInbox: Sendable {
    private struct State {
        var messages: [WebSocketMessage] = []
        var head = 0
        var bytes = 0
        var waiter: CheckedContinuation<WebSocketMessage?, any Error>?
        var ending: WebSocketEnding?
        var isHoldingBack = false
    }

    private let state = Locked(State())
    private let limit: Int
    /// Called with true when the inbox is full, false when it has room again.
    private let holdBack: @Sendable (Bool) -> Void

    init(limit: Int, holdBack: @escaping @Sendable (Bool) -> Void) {
        self.limit = limit
        self.holdBack = holdBack
    }

    /// A message arrived: to the waiting reader, or kept.
    func deliver(_ message: WebSocketMessage) {
        let (waiter, full) = state.withLock { state -> (CheckedContinuation<WebSocketMessage?, any Error>?, Bool) in
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, false)
            }
            state.messages.append(message)
            state.bytes += message.byteCount
            guard state.bytes > limit, !state.isHoldingBack else { return (nil, false) }
            state.isHoldingBack = true
            return (nil, true)
        }
        waiter?.resume(returning: message)
        if full { holdBack(true) }
    }

    /// The socket ended: a waiting reader gets the end (nil, or the error).
    func end(_ ending: WebSocketEnding) {
        let waiter = state.withLock { state -> CheckedContinuation<WebSocketMessage?, any Error>? in
            state.ending = state.ending ?? ending
            defer { state.waiter = nil }
            return state.waiter
        }
        guard let waiter else { return }
        if case .failed(let error) = ending { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
    }

    /// The next message, waiting for one; nil once the socket closed, throws the error it failed
    /// with. A cancelled task stops waiting with `CancellationError` (the socket runs on; what
    /// arrives meanwhile waits for the next read).
    func next() async throws -> WebSocketMessage? {
        try await withTaskCancellationHandler {
            try await waitForNext()
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    private func waitForNext() async throws -> WebSocketMessage? {
        try await withCheckedThrowingContinuation { continuation in
            enum Now { case wait, message(WebSocketMessage), ended(WebSocketEnding), cancelled }
            let (now, resumeReading) = state.withLock { state -> (Now, Bool) in
                guard state.head < state.messages.count else {
                    if let ending = state.ending { return (.ended(ending), false) }
                    // Checked under the lock: a cancel that came before the waiter was kept found
                    // none to resume.
                    if Task.isCancelled { return (.cancelled, false) }
                    state.waiter = continuation
                    return (.wait, false)
                }
                let message = state.messages[state.head]
                state.head += 1
                state.bytes -= message.byteCount
                if state.head == state.messages.count {
                    state.messages.removeAll(keepingCapacity: true)
                    state.head = 0
                }
                let resume = state.isHoldingBack && state.bytes <= limit / 2
                if resume { state.isHoldingBack = false }
                return (.message(message), resume)
            }
            if resumeReading { holdBack(false) }
            switch now {
            case .wait: break
            case .message(let message): continuation.resume(returning: message)
            case .ended(.failed(let error)): continuation.resume(throwing: error)
            case .ended(.closed): continuation.resume(returning: nil)
            case .cancelled: continuation.resume(throwing: CancellationError())
            }
        }
    }
}
