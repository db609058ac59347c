import Foundation

/// A response body as it arrives, for `await` callers: `for try await chunk in client.stream(r)`.
/// `lines` and `events` read it as text lines or server-sent events.
///
/// Each iteration sends the request once (iterating again sends it again). A failing status
/// throws its `TernError` from the first `next()`, before any chunk; a failure after some chunks
/// throws after them. Chunks wait in a bounded buffer: past `bufferLimit` bytes the exchange is
/// paused until the reader catches up (back-pressure: URLSession suspends its task on Apple
/// platforms). The whole body counts against the request's size limit (`maximumResponseSize`):
/// the stream fails with `.responseTooLarge` as it crosses it, after the reader had everything
/// before it. URLSession on Linux cannot pause a task (a resumed task sends its request again), so
/// there chunks keep arriving for a slow reader, bounded by that limit: memory stays bounded and
/// nothing is silently lost, unless the request lifts the limit (`Int.max`), when a reader that
/// falls behind there holds what it has not read. Cancelling the iterating task, or dropping the
/// iterator (leaving the loop), cancels the request. The idle `timeout` counts from the last
/// chunk, and not while the reader holds the body back (see `Request.onChunk`).
/// Thread safety: a value type, safe to share; one iterator per task.
public struct ByteStream: AsyncSequence, Sendable {
    /// A chunk of the body.
    public typealias Element = Data

    let client: Client
    let request: Request<Data>
    /// The longest line the reader takes (`lines`, `events`): a longer one fails the stream as
    /// its bytes arrive, before they are buffered for the reader.
    var lineLimit: Int?
    /// Bytes buffered ahead of the reader before the exchange is paused. Default 1 MB.
    public var bufferLimit = 1 << 20

    /// Starts the request and returns its iterator.
    public func makeAsyncIterator() -> Iterator {
        let buffer = StreamBuffer(limit: bufferLimit, hardLimit: CallOptions(request, client: client).sizeLimit)
        var request = request
        let watch = lineLimit.map { Locked(LineLengthWatch(limit: $0)) }
        request.chunkHandler = { [weak buffer] _, chunk, _ in
            if let watch, watch.withLock({ $0.exceeds(after: chunk) }) { return .responseTooLarge(limit: watch.withLock(\.limit)) }
            buffer?.append(chunk)
            return nil
        }
        request.callbackQueue = .immediate
        request.reportsCancellation = true
        buffer.handle = client.send(request, queue: .immediate) { [weak buffer] result in buffer?.finish(result) }
        return Iterator(buffer: buffer)
    }

    /// Reads the next chunk; nil at the end of the body.
    public struct Iterator: AsyncIteratorProtocol {
        let buffer: StreamBuffer

        /// The next chunk, nil at the end; throws `TernError`.
        public mutating func next() async throws -> Data? {
            try await buffer.next()
        }
    }

    /// The body as lines of text (UTF-8), split at LF with a CR before it dropped; a last line
    /// without a line feed comes too.
    public var lines: Lines { Lines(bytes: self) }

    /// The body as server-sent events (`text/event-stream`, parsed as the HTML standard says).
    public var events: ServerSentEvents { ServerSentEvents(bytes: self) }
}

/// Server-sent events read from a `ByteStream`.
/// Thread safety: a value type, safe to share; one iterator per task.
public struct ServerSentEvents: AsyncSequence, Sendable {
    /// One event.
    public typealias Element = ServerSentEvent
    let bytes: ByteStream
    /// The most bytes one event may hold (its data, and the line being read); a larger one fails
    /// the stream with `.responseTooLarge(limit:)`, so a stream without blank lines cannot grow
    /// memory without end. Default 1 MB (`defaultMaximumEventSize`).
    public var maximumEventSize = Self.defaultMaximumEventSize
    /// 1 MB.
    public static let defaultMaximumEventSize = 1 << 20

    /// Starts the request and returns its iterator.
    public func makeAsyncIterator() -> Iterator {
        var bytes = bytes
        bytes.lineLimit = maximumEventSize
        return Iterator(bytes: bytes.makeAsyncIterator(), parser: ServerSentEventParser(limit: maximumEventSize))
    }

    /// Reads the next event; nil at the end of the stream.
    public struct Iterator: AsyncIteratorProtocol {
        var bytes: ByteStream.Iterator
        var parser: ServerSentEventParser
        var ready: [ServerSentEvent] = []

        /// The next event, nil at the end; throws `TernError`.
        public mutating func next() async throws -> ServerSentEvent? {
            while ready.isEmpty {
                guard let chunk = try await bytes.next() else { return nil }
                ready = try parser.feed(chunk)
            }
            return ready.removeFirst()
        }
    }
}

/// The lines of a `ByteStream`.
/// Thread safety: a value type, safe to share; one iterator per task.
public struct Lines: AsyncSequence, Sendable {
    /// One line, without its line ending.
    public typealias Element = String
    let bytes: ByteStream
    /// The most bytes one line may hold; a longer one fails the stream with
    /// `.responseTooLarge(limit:)` as soon as it is that long, so a body without line feeds cannot
    /// grow memory without end. Default 1 MB (`defaultMaximumLineLength`).
    public var maximumLineLength = Self.defaultMaximumLineLength
    /// 1 MB.
    public static let defaultMaximumLineLength = 1 << 20

    /// Starts the request and returns its iterator.
    public func makeAsyncIterator() -> Iterator {
        var bytes = bytes
        bytes.lineLimit = maximumLineLength
        return Iterator(bytes: bytes.makeAsyncIterator(), splitter: LineSplitter(limit: maximumLineLength))
    }

    /// Reads the next line; nil at the end of the body.
    public struct Iterator: AsyncIteratorProtocol {
        var bytes: ByteStream.Iterator
        var splitter: LineSplitter
        var ready: [String] = []
        var ended = false

        /// The next line, nil at the end; throws `TernError`.
        public mutating func next() async throws -> String? {
            while ready.isEmpty {
                guard !ended else { return nil }
                if let chunk = try await bytes.next() {
                    ready = try splitter.feed(chunk)
                } else {
                    ended = true
                    ready = splitter.finish().map { [$0] } ?? []
                }
            }
            return ready.removeFirst()
        }
    }
}

/// The length of the line being received, counted as its bytes arrive.
/// Thread safety: a value type; feed one from one thread at a time.
struct LineLengthWatch: Sendable {
    let limit: Int
    private var current = 0

    init(limit: Int) {
        self.limit = limit
    }

    /// Whether the line being received is longer than `limit` once `chunk` is counted.
    mutating func exceeds(after chunk: Data) -> Bool {
        if let end = chunk.lastIndex(where: { $0 == 0x0A || $0 == 0x0D }) {
            current = chunk.endIndex - end - 1
        } else {
            current += chunk.count
        }
        return current > limit
    }
}
