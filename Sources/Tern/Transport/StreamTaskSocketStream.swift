#if canImport(Darwin)
import Foundation
import Security

/// A WebSocket's connection on Apple platforms: a `URLSessionStreamTask` (TCP, and TLS for `wss`
/// through `startSecureConnection`, with the client's minimum TLS version and pins) that Tern's
/// RFC 6455 engine reads and writes — the same framing, limits, close codes, heartbeat and
/// reconnection as on Linux. `URLSessionWebSocketTask` is not used: it hides the frames (no 1009
/// at the socket's own limit, no handshake body on a refusal, its own fragmentation).
/// The connection is direct: an explicit HTTP proxy is refused before it starts
/// (`unsupportedConfiguration`), as a stream task would not tunnel through it.
/// Thread safety: every mutable property is touched only on `queue` (the WebSocket's), which is
/// also the session's delegate queue.
// Sendable: see "Thread safety".
final class StreamTaskSocketStream: NSObject, WebSocketByteStream, URLSessionTaskDelegate, @unchecked Sendable {
    /// The most bytes asked for in one read.
    private static let readSize = 64 << 10
    /// Reads wait as long as the server is quiet: the WebSocket's heartbeat decides when quiet
    /// is too quiet (a stream task's zero timeout is not documented as "none").
    private static let quietReadTimeout: TimeInterval = 365 * 24 * 3600

    private let url: URL
    private let settings: TransportSettings
    private let writeTimeout: TimeInterval
    private let queue: DispatchQueue
    private var session: URLSession?
    private var task: URLSessionStreamTask?
    private var events: (@Sendable (WebSocketStreamEvent) -> Void)?
    private var isReading = false
    private var isReadingPaused = false
    private var hasEnded = false
    /// Why the server's certificate was refused, when a pin did not match.
    private var pinFailure: URLError?

    init(url: URL, settings: TransportSettings, connectTimeout: TimeInterval, queue: DispatchQueue) {
        self.url = url
        self.settings = settings
        self.writeTimeout = connectTimeout.isFinite && connectTimeout > 0 ? connectTimeout : Self.quietReadTimeout
        self.queue = queue
    }

    /// Why a socket cannot connect with `settings` here, if it cannot.
    static func refusal(for settings: TransportSettings) -> TernError? {
        guard case .http = settings.proxy.kind else { return nil }
        return .unsupportedConfiguration("a WebSocket on Apple platforms connects directly: an explicit HTTP proxy is not supported")
    }

    func open(events: @escaping @Sendable (WebSocketStreamEvent) -> Void) {
        queue.async { [self] in
            self.events = events
            guard let host = url.host else { return end(URLError(.badURL)) }
            let secure = url.scheme?.lowercased() == "https"
            let delegateQueue = OperationQueue()
            delegateQueue.maxConcurrentOperationCount = 1
            delegateQueue.underlyingQueue = queue
            let session = URLSession(
                configuration: settings.makeSessionConfiguration(idleTimeout: writeTimeout), delegate: self, delegateQueue: delegateQueue)
            let task = session.streamTask(withHostName: host, port: url.port ?? (secure ? 443 : 80))
            (self.session, self.task) = (session, task)
            task.resume()
            if secure { task.startSecureConnection() }
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
                let failure = error.map { self.pinFailure ?? Self.urlError($0) }
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
        guard let task, !hasEnded, !isReading, !isReadingPaused else { return }
        isReading = true
        task.readData(ofMinLength: 1, maxLength: Self.readSize, timeout: Self.quietReadTimeout) { data, atEOF, error in
            self.queue.async {
                self.isReading = false
                guard !self.hasEnded else { return }
                if let data, !data.isEmpty { self.events?(.received(data)) }
                if let error { return self.end(self.pinFailure ?? Self.urlError(error)) }
                if atEOF { return self.end(nil) }
                self.readNext()
            }
        }
    }

    /// Ends the stream once: reports it (unless closed by the WebSocket itself) and lets the
    /// task and its session go.
    private func end(_ error: URLError?, report: Bool = true) {
        guard !hasEnded else { return }
        hasEnded = true
        task?.cancel()
        session?.invalidateAndCancel()
        (task, session) = (nil, nil)
        if report { events?(.ended(error)) }
        events = nil
    }

    private static func urlError(_ error: any Error) -> URLError {
        error as? URLError ?? URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error])
    }

    // MARK: URLSessionTaskDelegate

    /// The server-trust challenge of a pinned host: answered only when the chain is trusted and
    /// the server's certificate matches a pin; everything else gets the system's handling.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let space = challenge.protectionSpace
        guard space.authenticationMethod == NSURLAuthenticationMethodServerTrust, let trust = space.serverTrust else {
            return completionHandler(.performDefaultHandling, nil)
        }
        let pins = settings.tls.pinning.pins(for: space.host)
        guard pins != .none else { return completionHandler(.performDefaultHandling, nil) }
        guard ServerTrust.satisfies(trust, pins: pins) else {
            pinFailure = TLSFailure.pinMismatch(host: space.host)
            return completionHandler(.cancelAuthenticationChallenge, nil)
        }
        completionHandler(.useCredential, URLCredential(trust: trust))
    }
}
#endif
