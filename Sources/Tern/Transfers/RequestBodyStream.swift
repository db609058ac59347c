import Foundation

/// A request body produced while it is sent: a bounded buffer between the code that makes the
/// bytes (`write(_:)`) and the transport that sends them (`read(into:whenReadable:)`).
///
/// The producer is asked for more only as the transport sends: `write` returns once what is
/// buffered falls under `bufferSize`, so a fast producer never runs ahead of the network by more
/// than that. Tern makes one per attempt from a `RequestBody.stream` body; a custom transport
/// reads it, and closes it when its exchange ends.
/// Thread safety: safe to use from any thread; one reader and one writer at a time.
public final class RequestBodyStream: Sendable {
    /// What a transport's `read(into:whenReadable:)` got.
    public enum ReadResult: Sendable, Equatable {
        /// This many bytes were copied into the buffer.
        case bytes(Int)
        /// Nothing is buffered yet: `whenReadable` runs once there is (or the body ended).
        case pending
        /// The body is complete: every byte has been read.
        case end
        /// The producer failed (or wrote more or fewer bytes than `length`): send nothing more
        /// and end the exchange with an error; Tern reports why.
        case failed
    }

    /// The body's length in bytes when known (sent as `Content-Length`); nil sends it chunked
    /// on HTTP/1.1 (in DATA frames on HTTP/2).
    public let length: Int64?
    /// How many bytes may wait in the buffer before `write` holds the producer back.
    public let bufferSize: Int

    private struct State {
        var chunks: [Data] = []
        /// Bytes of `chunks[0]` already read.
        var offset = 0
        var buffered = 0
        var produced: Int64 = 0
        var finished = false
        var failure: RequestBodyFailure?
        /// The reader is gone (the exchange ended): writes fail from now on.
        var closed = false
        var reader: (@Sendable () -> Void)?
        var writer: CheckedContinuation<Void, any Error>?
        var producer: Task<Void, Never>?
    }
    private let state = Locked(State())

    /// A stream of `length` bytes (nil: unknown), holding up to `bufferSize` bytes.
    public init(length: Int64?, bufferSize: Int = 256 * 1024) {
        self.length = length
        self.bufferSize = max(1, bufferSize)
    }

    // MARK: The producer's side

    /// Adds `data` to the body; returns at once while less than `bufferSize` bytes wait, else once
    /// the transport has read them down to half of it. Throws
    /// `CancellationError` when the exchange ended (cancelled, failed, or answered early), so a
    /// producer stops making bytes nobody will send.
    public func write(_ data: Data) async throws {
        guard !data.isEmpty else { return }
        let (reader, mustWait, refusal) = state.withLock { state -> ((@Sendable () -> Void)?, Bool, (any Error)?) in
            if state.closed || state.finished || state.failure != nil { return (nil, false, CancellationError()) }
            state.produced += Int64(data.count)
            if let length, state.produced > length {
                state.failure = .lengthMismatch(expected: length, produced: state.produced)
                defer { state.reader = nil }
                return (state.reader, false, CancellationError())
            }
            state.chunks.append(data)
            state.buffered += data.count
            defer { state.reader = nil }
            return (state.reader, state.buffered >= bufferSize, nil)
        }
        reader?()
        if let refusal { throw refusal }
        guard mustWait else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { state -> Result<Void, any Error>? in
                if state.closed { return .failure(CancellationError()) }
                guard state.buffered > bufferSize / 2 else { return .success(()) }
                state.writer = continuation
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// The producer is done: a body of known length must have had every byte.
    func finish() {
        let reader = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.finished, state.failure == nil else { return nil }
            state.finished = true
            if let length, state.produced != length {
                state.failure = .lengthMismatch(expected: length, produced: state.produced)
            }
            defer { state.reader = nil }
            return state.reader
        }
        reader?()
    }

    /// The producer failed with `error` (ignored once the stream is closed: the exchange ended
    /// first, and the producer's cancellation is not news).
    func fail(_ error: any Error) {
        let reader = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.closed, !state.finished, state.failure == nil else { return nil }
            state.failure = .producerFailed(error)
            defer { state.reader = nil }
            return state.reader
        }
        reader?()
    }

    /// Runs `produce` on a task of its own, then finishes the stream (or fails it with what
    /// `produce` threw); closing the stream cancels the task.
    func start(_ produce: @escaping @Sendable (RequestBodyStream) async throws -> Void) {
        let task = Task { [self] in
            do {
                try await produce(self)
                finish()
            } catch {
                fail(error)
            }
        }
        let closed = state.withLock { state -> Bool in
            if !state.closed { state.producer = task }
            return state.closed
        }
        if closed { task.cancel() }
    }

    /// Why the body could not be sent whole, if it could not.
    var failure: RequestBodyFailure? { state.withLock { $0.failure } }

    // MARK: The transport's side

    /// Copies buffered bytes into `buffer` without waiting. When nothing is buffered, it returns
    /// `.pending` and runs `whenReadable` once there is something to read (bytes, the end or a
    /// failure); `whenReadable` runs on the producer's thread and should only schedule the read.
    public func read(into buffer: UnsafeMutableRawBufferPointer, whenReadable: @escaping @Sendable () -> Void) -> ReadResult {
        let (result, writer) = state.withLock { state -> (ReadResult, CheckedContinuation<Void, any Error>?) in
            if state.failure != nil || state.closed { return (.failed, nil) }
            guard state.buffered > 0 else {
                if state.finished { return (.end, nil) }
                state.reader = whenReadable
                return (.pending, nil)
            }
            var copied = 0
            while copied < buffer.count, !state.chunks.isEmpty {
                let chunk = state.chunks[0]
                let take = min(buffer.count - copied, chunk.count - state.offset)
                chunk.withUnsafeBytes { bytes in
                    let start = bytes.baseAddress! + state.offset
                    (buffer.baseAddress! + copied).copyMemory(from: start, byteCount: take)
                }
                copied += take
                state.offset += take
                if state.offset == chunk.count {
                    state.chunks.removeFirst()
                    state.offset = 0
                }
            }
            state.buffered -= copied
            // The writer goes on once half the buffer is free: it then writes in bursts, not one
            // thread hop per read.
            guard state.buffered <= bufferSize / 2, let writer = state.writer else { return (.bytes(copied), nil) }
            state.writer = nil
            return (.bytes(copied), writer)
        }
        writer?.resume()
        return result
    }

    /// Reads into `buffer`, waiting for the producer: the byte count, 0 at the end, -1 after a
    /// failure. For a reader on a thread of its own (an `InputStream`).
    func readWaiting(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        let ready = DispatchSemaphore(value: 0)
        while true {
            switch read(into: buffer, whenReadable: { ready.signal() }) {
            case .bytes(let count): return count
            case .end: return 0
            case .failed: return -1
            case .pending: ready.wait()
            }
        }
    }

    /// The exchange ended: drops what is buffered, fails the producer's next `write`, cancels
    /// its task, and wakes a waiting reader (whose next read is `.failed`). Calling it more than
    /// once has no further effect.
    public func close() {
        let (writer, producer, reader) = state.withLock { state in
            guard !state.closed else {
                return (CheckedContinuation<Void, any Error>?.none, Task<Void, Never>?.none, (@Sendable () -> Void)?.none)
            }
            state.closed = true
            state.chunks = []
            state.buffered = 0
            defer { (state.writer, state.producer, state.reader) = (nil, nil, nil) }
            return (state.writer, state.producer, state.reader)
        }
        writer?.resume(throwing: CancellationError())
        producer?.cancel()
        reader?()
    }

    deinit {
        close()
    }
}
