import Foundation

/// The chunks of a streamed response between the transport and an `await` reader: bounded by
/// `limit` bytes, past which the exchange is paused until the reader has taken half of them.
/// Where the transport cannot pause (`Transport.pausesExchanges`: URLSession on Linux), chunks keep coming: past `hardLimit`
/// bytes waiting (the request's size limit) the request fails with `.responseTooLarge` — after
/// the reader has had every chunk that arrived before. Dropping the last reference (the
/// iterator) cancels the request.
/// Thread safety: safe to use from any thread.
final class StreamBuffer: Sendable {
    private struct State {
        var chunks: [Data] = []
        var next = 0
        var bytes = 0
        var paused = false
        var end: Result<Void, TernError>?
        var waiter: CheckedContinuation<Data?, any Error>?
        var handle: RequestHandle?
    }
    private let state = Locked(State())
    private let limit: Int
    private let hardLimit: Int?

    init(limit: Int, hardLimit: Int?) {
        self.limit = max(1, limit)
        self.hardLimit = hardLimit
    }

    deinit {
        // The reader left the loop (or never started it): the request has no one to deliver to.
        state.withLock { $0.handle }?.cancel()
    }

    /// Bytes waiting for the reader.
    var bufferedBytes: Int { state.withLock { $0.bytes } }

    /// The request the chunks come from.
    var handle: RequestHandle? {
        get { state.withLock { $0.handle } }
        set { state.withLock { $0.handle = newValue } }
    }

    /// A chunk arrived (on the transport's thread).
    func append(_ chunk: Data) {
        let (waiter, pause, overflow) = state.withLock {
            state -> (CheckedContinuation<Data?, any Error>?, RequestHandle?, RequestHandle?) in
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, nil, nil)
            }
            state.chunks.append(chunk)
            state.bytes += chunk.count
            if let hardLimit, state.bytes > hardLimit { return (nil, nil, state.handle) }
            guard state.bytes > limit, !state.paused else { return (nil, nil, nil) }
            state.paused = true
            return (nil, state.handle, nil)
        }
        waiter?.resume(returning: chunk)
        pause?.lifecycle.setExchangePaused(true)
        if let overflow, let hardLimit { overflow.lifecycle.fail(.responseTooLarge(limit: hardLimit)) }
    }

    /// The request ended.
    func finish(_ result: Result<Response<Data>, TernError>) {
        let waiter = state.withLock { state -> CheckedContinuation<Data?, any Error>? in
            state.end = result.map { _ in () }
            defer { state.waiter = nil }
            return state.waiter
        }
        switch result {
        case .success: waiter?.resume(returning: nil)
        case .failure(let error): waiter?.resume(throwing: error)
        }
    }

    /// The next chunk, nil after the last, or the failure that ended the body.
    func next() async throws -> Data? {
        if let ready = try take() { return ready.chunk }
        let handle = self.handle
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                let now = state.withLock { state -> Result<Data?, any Error>? in
                    if state.next < state.chunks.count || state.end != nil {
                        return Result { try Self.take(&state)?.chunk ?? nil }
                    }
                    state.waiter = continuation
                    return nil
                }
                if let now { continuation.resume(with: now) }
            }
        } onCancel: {
            handle?.cancel()
        }
    }

    /// What a reader can take without waiting: a chunk, or the end of the body (`chunk` nil).
    private struct Taken {
        let chunk: Data?
    }

    /// A buffered chunk or the end, if either is there; resumes a paused exchange.
    private func take() throws -> Taken? {
        let (taken, resume) = try state.withLock { state -> (Taken?, RequestHandle?) in
            let taken = try Self.take(&state)
            guard state.paused, state.bytes <= limit / 2 else { return (taken, nil) }
            state.paused = false
            return (taken, state.handle)
        }
        resume?.lifecycle.setExchangePaused(false)
        return taken
    }

    private static func take(_ state: inout State) throws -> Taken? {
        if state.next < state.chunks.count {
            let chunk = state.chunks[state.next]
            state.next += 1
            state.bytes -= chunk.count
            if state.next == state.chunks.count {
                state.chunks.removeAll(keepingCapacity: true)
                state.next = 0
            }
            return Taken(chunk: chunk)
        }
        switch state.end {
        case .success?: return Taken(chunk: nil)
        case .failure(let error)?:
            state.end = .success(())  // thrown once; the next call ends the sequence
            throw error
        case nil: return nil
        }
    }
}
