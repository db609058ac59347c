#if canImport(Darwin)
import Foundation

/// A WebSocket's connection on Apple platforms: a `URLSessionStreamTask` of the client's
/// `URLSessionTransport` session (TCP, and TLS for `wss` through `startSecureConnection`, with
/// the session's minimum TLS version and the transport's pins) that Tern's RFC 6455 engine reads
/// and writes — the same framing, limits, close codes, heartbeat and reconnection as on Linux.
/// `URLSessionWebSocketTask` is not used: it hides the frames (no 1009 at the socket's own
/// limit, no handshake body on a refusal, its own fragmentation).
/// Thread safety: every mutable property is touched only on `queue` (the WebSocket's).
// Sendable: see "Thread safety".
// Debug builds check the confinement (`queue.assertIsCurrent()`).
final class StreamTaskSocketStream: WebSocketByteStream, @unchecked Sendable {
    /// The most bytes asked for in one read.
    private static let readSize = 64 << 10
    /// Reads wait as long as the server is quiet: the WebSocket's heartbeat decides when quiet
    /// is too quiet (a stream task's zero timeout is not documented as "none").
    private static let quietReadTimeout: TimeInterval = 365 * 24 * 3600

    private let url: URL
    private let transport: URLSessionTransport
    private let writeTimeout: TimeInterval
    private let queue: DispatchQueue
    private var task: URLSessionStreamTask?
    private var events: (@Sendable (WebSocketStreamEvent) -> Void)?
    private var isReading = false
    private var isReadingPaused = false
    private var hasEnded = false

    init(url: URL, transport: URLSessionTransport, writeTimeout: TimeInterval, queue: DispatchQueue) {
        self.url = url
        self.transport = transport
        self.writeTimeout = writeTimeout.isFinite && writeTimeout > 0 ? writeTimeout : Self.quietReadTimeout
        self.queue = queue
    }

    func open(events: @escaping @Sendable (WebSocketStreamEvent) -> Void) {
        queue.async { [self] in
            self.events = events
            guard let task = transport.makeStreamTask(to: url) else { return end(URLError(.cannotConnectToHost)) }
            self.task = task
            task.resume()
            if url.scheme?.lowercased() == "https" { task.startSecureConnection() }
            // Writes wait behind the connect and the TLS handshake; a failure of either fails
            // the first write and the first read.
            events(.opened)
            readNext()
        }
    }

    func write(_ bytes: Data, written: @escaping @Sendable (URLError?) -> Void) {
        guard let task, !hasEnded else { return written(URLError(.networkConnectionLost)) }
        task.write(bytes, timeout: writeTimeout) { error in
            self.queue.async {
                let failure = error.map(Self.urlError)
                written(failure)
                if let failure { self.end(failure) }
            }
        }
    }

    func finishWriting() {
        // Queued behind the writes before it, as every write of the stream task is.
        task?.closeWrite()
    }

    func setReadingPaused(_ paused: Bool) {
        queue.async { [self] in
            isReadingPaused = paused
            if !paused { readNext() }
        }
    }

    func close(released: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            end(nil, report: false)
            // URLSession frees the task's connection itself once it is cancelled.
            released()
        }
    }

    /// Asks for the next bytes: one read at a time, none while paused (the server's bytes then
    /// wait in the socket, and TCP holds the server back).
    private func readNext() {
        queue.assertIsCurrent()
        guard let task, !hasEnded, !isReading, !isReadingPaused else { return }
        isReading = true
        task.readData(ofMinLength: 1, maxLength: Self.readSize, timeout: Self.quietReadTimeout) { data, atEOF, error in
            self.queue.async {
                self.isReading = false
                guard !self.hasEnded else { return }
                if let data, !data.isEmpty { self.events?(.received(data)) }
                if let error { return self.end(Self.urlError(error)) }
                if atEOF { return self.end(nil) }
                self.readNext()
            }
        }
    }

    /// Ends the stream once: reports it (unless closed by the WebSocket itself), with the pin
    /// failure the server was refused for in place of the error it caused, and lets the task go.
    private func end(_ error: URLError?, report: Bool = true) {
        queue.assertIsCurrent()
        guard !hasEnded else { return }
        hasEnded = true
        let pinFailure = task.flatMap { transport.endStreamTask($0) }
        task = nil
        if report { events?(.ended(error.map { pinFailure ?? $0 })) }
        events = nil
    }

    private static func urlError(_ error: any Error) -> URLError {
        error as? URLError ?? URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error])
    }
}
#endif
