#if canImport(Glibc) || canImport(Musl)
#if canImport(Glibc)
import Glibc
#else
import Musl
#endif
import Foundation

/// A WebSocket's connection through libcurl's connect-only mode: libcurl resolves, connects,
/// goes through the proxy and does TLS with the client's settings (pins included), driven by its
/// `CurlSocketConnector`. A connection with TLS (`wss`, or an HTTPS proxy) stays libcurl's: Tern
/// reads and writes it with `curl_easy_recv` and `curl_easy_send`. A plain one (`ws`) is handed
/// over once connected: libcurl's handles are freed and Tern reads and writes the socket itself,
/// so an idle `ws` socket holds no libcurl memory. Either way dispatch sources on the socket wake
/// it (no thread per socket, connecting or connected). Works with every libcurl Tern loads: it
/// needs no WebSocket support of its own.
/// Thread safety: every call on the handle runs on `queue` (the WebSocket's), one at a time.
// Sendable: every mutable property is touched only on `queue`.
// Debug builds check the confinement (`queue.assertIsCurrent()`).
final class CurlSocketStream: WebSocketByteStream, @unchecked Sendable {
    private let curl: LibCurl
    private let settings: CurlSettings
    /// Where it connects: `http(s)://host:port/`, the WebSocket URL's scheme made HTTP's.
    private let url: URL
    private let connectTimeout: TimeInterval
    /// The WebSocket's own serial queue: its events are delivered here.
    private let queue: DispatchQueue
    /// Marks `queue`, so a pause asked from one of its blocks applies at once.
    private let onQueue = DispatchSpecificKey<Void>()
    private var easy: LibCurl.Handle?
    private var connector: CurlSocketConnector?
    /// The socket once handed over by libcurl (a plain connection), else -1.
    private var socket: Int32 = -1
    private var reader: DispatchSourceRead?
    private var writer: DispatchSourceWrite?
    private var isWriterRunning = false
    private var isReaderPaused = false
    /// Shut down for writing once what is pending is written (`finishWriting`).
    private var finishesWriting = false
    private var pending: [(bytes: Data, offset: Int, written: @Sendable (URLError?) -> Void)] = []
    private var events: (@Sendable (WebSocketStreamEvent) -> Void)?
    private var hasEnded = false
    /// Whether libcurl's handles (or the handed-over socket) are freed, and who waits for it.
    private var isReleased = false
    private var releaseWaiters: [@Sendable () -> Void] = []

    init(curl: LibCurl, settings: CurlSettings, url: URL, connectTimeout: TimeInterval, queue: DispatchQueue) {
        self.curl = curl
        self.queue = queue
        self.settings = settings
        self.url = url
        self.connectTimeout = connectTimeout
        queue.setSpecific(key: onQueue, value: ())
    }

    func open(events: @escaping @Sendable (WebSocketStreamEvent) -> Void) {
        queue.async { [self] in
            self.events = events
            guard let connector = CurlSocketConnector(curl: curl, queue: queue), let easy = curl.easyInit() else {
                return end(URLError(.cannotConnectToHost))
            }
            curl.set(easy, .url, url.absoluteString)
            curl.set(easy, .connectOnly, 1)
            curl.set(easy, .noSignal, 1)
            curl.set(easy, .protocols, LibCurl.httpProtocols)
            // Tern reads into its own buffer (`curl_easy_recv`): libcurl's 16 KB one would sit unused.
            curl.set(easy, .bufferSize, 1024)
            if connectTimeout.isFinite, connectTimeout > 0 { curl.set(easy, .connectTimeoutMS, Int(connectTimeout * 1000)) }
            if let refusal = CurlExchange.configureConnection(easy, curl: curl, settings: settings, host: url.host) {
                curl.easyCleanup(easy)
                return end(refusal)
            }
            self.easy = easy
            self.connector = connector
            connector.connect(easy) { code, socket in self.connected(code, socket) }
        }
    }

    /// The connect ended: connected (code 0) on `socket`, refused, or timed out.
    private func connected(_ code: Int32, _ socket: Int32) {
        guard !hasEnded else { return }
        guard code == 0 else { return end(curl.urlError(code, detail: "connecting to \(url.host ?? "the server")")) }
        guard socket >= 0 else { return end(URLError(.cannotConnectToHost)) }
        guard isPlain, let connector else { return start(socket) }
        self.connector = nil
        easy = nil
        connector.handOver(socket) { socket in
            guard !self.hasEnded else { return closeDescriptor(socket) }
            self.socket = socket
            self.start(socket)
        }
    }

    private func start(_ socket: Int32) {
        startSources(socket)
        events?(.opened)
        readAvailable()  // TLS may already hold bytes the socket will not signal again
    }

    /// Whether the connection carries the WebSocket's bytes as they are: `ws`, and no TLS to a proxy.
    private var isPlain: Bool {
        guard url.scheme == "http" else { return false }
        guard case .environment = settings.proxy.kind else { return true }
        // libcurl takes an `http` URL's proxy from these; an `https://` one is TLS to the proxy.
        let environment = ProcessInfo.processInfo.environment
        return !["http_proxy", "all_proxy", "ALL_PROXY"].contains { environment[$0]?.lowercased().hasPrefix("https://") == true }
    }

    func write(_ bytes: Data, written: @escaping @Sendable (URLError?) -> Void) {
        guard !hasEnded else { return written(URLError(.networkConnectionLost)) }
        pending.append((bytes, 0, written))
        // While the socket is full, the writer's source flushes once it has room.
        if !isWriterRunning { flush() }
    }

    func finishWriting() {
        finishesWriting = true
        if pending.isEmpty { shutDownWriting() }
    }

    /// The FIN after the last byte: on a socket Tern holds; a TLS connection stays libcurl's, which
    /// has no half-close, so there reading on to the server's close is what keeps it graceful.
    private func shutDownWriting() {
        guard socket >= 0 else { return }
        _ = shutdown(socket, Int32(SHUT_WR))
    }

    func setReadingPaused(_ paused: Bool) {
        // Asked on the queue (from a read's event) a pause stops the read loop before its next
        // read: a server that sends without end is not read into memory meanwhile.
        if paused, DispatchQueue.getSpecific(key: onQueue) != nil { return applyPause(true) }
        queue.async { [self] in applyPause(paused) }
    }

    private func applyPause(_ paused: Bool) {
        guard let reader, !hasEnded, paused != isReaderPaused else { return }
        isReaderPaused = paused
        if paused {
            reader.suspend()
        } else {
            reader.resume()
            readAvailable()
        }
    }

    func close(released: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            if isReleased { return released() }
            releaseWaiters.append(released)
            end(nil, report: false)
        }
    }

    private func startSources(_ socket: Int32) {
        let reader = DispatchSource.makeReadSource(fileDescriptor: socket, queue: queue)
        reader.setEventHandler { [weak self] in self?.readAvailable() }
        let writer = DispatchSource.makeWriteSource(fileDescriptor: socket, queue: queue)
        writer.setEventHandler { [weak self] in self?.flush() }
        self.reader = reader
        self.writer = writer
        reader.resume()
    }

    /// Reads until libcurl has nothing more (`CURLE_AGAIN`), reporting each piece.
    private func readAvailable() {
        queue.assertIsCurrent()
        guard easy != nil || socket >= 0, !hasEnded, !isReaderPaused else { return }
        SocketReadBuffers.borrow { buffer in
            while !hasEnded, !isReaderPaused {
                switch receive(into: buffer) {
                case .again: return
                case .failed(let error): return end(error)
                case .done(0): return end(nil)  // the server closed the connection
                case .done(let count): events?(.received(Data(bytes: buffer.baseAddress!, count: count)))
                }
            }
        }
    }

    /// What one read or write did.
    private enum Outcome {
        case done(Int), again, failed(URLError)
    }

    private func receive(into buffer: UnsafeMutableRawBufferPointer) -> Outcome {
        let doing = "reading the WebSocket"
        if let easy { return curlOutcome(doing) { curl.easyRecv(easy, buffer.baseAddress, buffer.count, &$0) } }
        return Self.socketOutcome(doing) { recv(socket, buffer.baseAddress, buffer.count, 0) }
    }

    private func transmit(_ bytes: UnsafeRawBufferPointer) -> Outcome {
        let doing = "writing the WebSocket"
        if let easy { return curlOutcome(doing) { curl.easySend(easy, bytes.baseAddress, bytes.count, &$0) } }
        return Self.socketOutcome(doing) { send(socket, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }

    /// What a `curl_easy_recv` or `curl_easy_send` call did: it returns libcurl's code and sets
    /// the count.
    private func curlOutcome(_ doing: String, _ call: (inout Int) -> Int32) -> Outcome {
        var count = 0
        let code = call(&count)
        if code == LibCurl.again { return .again }
        return code == 0 ? .done(count) : .failed(curl.urlError(code, detail: doing))
    }

    /// What a `recv` or `send` call did (it returns the count, or -1 with `errno` set), tried again
    /// when a signal interrupted it; a failure in URLSession's terms.
    private static func socketOutcome(_ doing: String, _ call: () -> Int) -> Outcome {
        while true {
            let count = call()
            if count >= 0 { return .done(count) }
            let code = errno
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK { return .again }
            let kind: URLError.Code = code == ETIMEDOUT ? .timedOut : .networkConnectionLost
            return .failed(URLError(kind, userInfo: [NSLocalizedDescriptionKey: "\(doing): \(String(cString: strerror(code)))"]))
        }
    }

    /// Writes what is pending until done or the socket is full; waits for room in the latter case.
    private func flush() {
        queue.assertIsCurrent()
        guard easy != nil || socket >= 0, !hasEnded else { return }
        while let first = pending.first {
            let outcome = first.bytes.withUnsafeBytes { transmit(UnsafeRawBufferPointer(rebasing: $0[first.offset...])) }
            let count: Int
            switch outcome {
            case .again: return waitForRoom(true)
            case .failed(let error): return end(error)
            case .done(let done): count = done
            }
            if first.offset + count < first.bytes.count {
                pending[0].offset += count
                continue
            }
            pending.removeFirst()
            first.written(nil)
        }
        waitForRoom(false)
        if finishesWriting { shutDownWriting() }
    }

    private func waitForRoom(_ waiting: Bool) {
        guard let writer, waiting != isWriterRunning else { return }
        isWriterRunning = waiting
        if waiting { writer.resume() } else { writer.suspend() }
    }

    /// Ends the stream once: reports it (unless closed by the WebSocket itself), fails what was
    /// not written, stops the sources and, once they have stopped, releases the handle (its
    /// socket; a connect still running is abandoned).
    private func end(_ error: URLError?, report: Bool = true) {
        queue.assertIsCurrent()
        guard !hasEnded else { return }
        hasEnded = true
        let unwritten = pending
        pending = []
        for write in unwritten { write.written(error ?? URLError(.networkConnectionLost)) }
        let connector = self.connector
        let socket = self.socket
        (self.connector, self.easy, self.socket) = (nil, nil, -1)
        // Runs on `queue`: the sources' cancel handlers do.
        let release = { [self] in
            connector?.release()
            if socket >= 0 { closeDescriptor(socket) }
            isReleased = true
            let waiters = releaseWaiters
            releaseWaiters = []
            for waiter in waiters { waiter() }
        }
        let sources: [any DispatchSourceProtocol] = [reader, writer].compactMap { $0 }
        if isReaderPaused { reader?.resume() }
        if !isWriterRunning { writer?.resume() }
        // Releasing the handle (or closing a handed-over socket) only after both sources let go
        // of it (their cancel handlers run on `queue`).
        let remaining = Locked(sources.count)
        for source in sources {
            source.setCancelHandler {
                if remaining.withLock({
                    $0 -= 1; return $0
                }) == 0 {
                    release()
                }
            }
            source.cancel()
        }
        if sources.isEmpty { release() }
        reader = nil
        writer = nil
        if report { events?(.ended(error)) }
        events = nil
    }
}

/// Closes a socket Tern owns.
private func closeDescriptor(_ socket: Int32) {
    #if canImport(Glibc)
    _ = Glibc.close(socket)
    #else
    _ = Musl.close(socket)
    #endif
}
#endif
