import Foundation

/// The chunks of a streamed response between the transport and an `await` reader: bounded by
/// `limit` bytes, past which the exchange is paused until the reader has taken half of them.
/// Where the transport cannot pause (`Transport.pausesExchanges`: URLSession on Linux), chunks keep coming: past `hardLimit`
/// bytes waiting (the request's size limit) the request fails with `.responseTooLarge` — after
/// the reader has had every chunk that arrived before. Dropping the last reference (the
/// iterator) cancels the request.
/// Thread safety: safe to use from any thread.
final class StreamBuffer: Sendable {
    private let chunks: BackpressureQueue<Data>
    private let hardLimit: Int?
    private let request = Locked<RequestHandle?>(nil)

    init(limit: Int, hardLimit: Int?) {
        self.hardLimit = hardLimit
        let request = self.request
        chunks = BackpressureQueue(limit: limit, size: \.count) { pause in
            request.withLock { $0 }?.lifecycle.setExchangePaused(pause)
        }
    }

    deinit {
        // The reader left the loop (or never started it): the request has no one to deliver to.
        handle?.cancel()
    }

    /// Bytes waiting for the reader.
    var bufferedBytes: Int { chunks.buffered }

    /// The request the chunks come from.
    var handle: RequestHandle? {
        get { request.withLock { $0 } }
        set { request.withLock { $0 = newValue } }
    }

    /// A chunk arrived (on the transport's thread).
    func append(_ chunk: Data) {
        let waiting = chunks.append(chunk)
        if let hardLimit, waiting > hardLimit { handle?.lifecycle.fail(.responseTooLarge(limit: hardLimit)) }
    }

    /// The request ended.
    func finish(_ result: Result<Response<Data>, TernError>) {
        chunks.finish(result.map { _ in () }.mapError { $0 })
    }

    /// The next chunk, nil after the last, or the failure that ended the body. A cancelled reader
    /// cancels the request.
    func next() async throws -> Data? {
        let handle = self.handle
        return try await chunks.next { handle?.cancel() }
    }
}
