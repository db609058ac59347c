import Foundation

/// One WebSocket's protocol over its byte stream: the opening handshake as its call's exchange
/// (`upgrade`), then, once the socket `begin`s it, frames in and out, pings and the heartbeat,
/// the close handshake both ways, and its one ending.
///
/// Until the 101, what happens is the call's: the answer's head and body, or the failure, go to
/// the exchange's events (the call's clocks bound it, its cancel aborts it). After that, the
/// server's protocol mistakes close the socket with their code (1002, 1007, 1009) and end it
/// with `TernError.webSocketFailed`; a server's close frame is answered with the same code and
/// ends it as `.closed`; a connection that ends without a close frame is `.abnormalClosure`, and
/// a close the server never answers `.timedOut`. After Tern wrote a close frame it stops writing
/// and reads on, discarding, until the server closes (or `closeTimeout`): closing a socket the
/// peer still writes to would answer it with a reset, and the peer would never read the frame.
/// Thread safety: every mutable property is touched only on `queue`, where the stream's events
/// arrive; the public side reaches it through `queue.async`, and `send` reads the locked
/// `sendBuffer` to return without waiting for the queue.
// Sendable: all mutable state is confined to `queue`, but `sendBuffer`, which is locked.
// Debug builds check the confinement (`queue.assertIsCurrent()`).
final class WebSocketConnection: @unchecked Sendable {
    typealias Event = WebSocketDriverEvent

    /// Frames larger than this go out in fragments (RFC 6455 §5.4).
    static let fragmentSize = 1 << 20

    let queue: DispatchQueue
    let options: WebSocketOptions
    private let stream: any WebSocketByteStream
    private let handshake: WebSocketHandshake
    /// The upgrade request (its URL `http(s)`), once the call's exchange starts.
    private var request: URLRequest?
    /// The call's exchange, until it has its answer; then the socket's events, once it begins.
    private var exchange: (@Sendable (TransportEvent) -> Void)?
    private var park: (@Sendable (any WebSocketDriver) -> Void)?
    private var events: (@Sendable (Event) -> Void)?
    /// Bytes that followed the 101, read as frames once the socket begins.
    private var leftover = Data()

    /// The connection's state: every event goes through it (`WebSocketStateMachine`).
    private var machine = WebSocketStateMachine()
    private var headBytes: [UInt8] = []
    private var refusal: (head: RawResponseHead, body: [UInt8])?
    private var reader: WebSocketMessageReader
    private var unsent: [(frames: Data, done: @Sendable (TernError?) -> Void)] = []
    private var pings: [(payload: Data, done: @Sendable (TernError?) -> Void)] = []
    private var pingCounter: UInt64 = 0
    private var pongTimer: DispatchSourceTimer?
    private var heartbeat: DispatchSourceTimer?
    private var closeTimer: DispatchSourceTimer?
    /// The code of the close frame Tern wrote, if it wrote one.
    private let sentClose = Locked<WebSocketCloseCode?>(nil)
    /// Bytes accepted by `send` and not yet written, and whether `send` may accept more without
    /// the queue (only while open: before, messages wait for the handshake; after, they fail).
    private let sendBuffer = Locked((bytes: 0, isOpen: false, deflates: false))
    /// The agreed permessage-deflate, set when the socket opens; nil when none was.
    private var deflate: WebSocketDeflate?

    init(stream: any WebSocketByteStream, queue: DispatchQueue, handshake: WebSocketHandshake, options: WebSocketOptions) {
        self.stream = stream
        self.queue = queue
        self.handshake = handshake
        self.options = options
        reader = WebSocketMessageReader(maximumMessageSize: options.maximumMessageSize, maximumFrameSize: options.maximumMessageSize)
    }

    // MARK: The opening, as a call's exchange

    /// Connects and writes `request` as the upgrade (its headers are the adapters'), reporting
    /// the answer to `exchange`; a 101 `park`s the connection first, for the socket to `begin`.
    /// The stream holds the connection until it ends.
    func upgrade(
        _ request: URLRequest, exchange: @escaping @Sendable (TransportEvent) -> Void,
        park: @escaping @Sendable (any WebSocketDriver) -> Void
    ) {
        queue.async { [self] in
            (self.request, self.exchange, self.park) = (request, exchange, park)
            carryOut(machine.start())
        }
    }

    /// The socket takes the connection its 101 opened, with what the 101 agreed to: events go
    /// to `events` from now on, starting with `.opened`. Reading stays paused until the socket
    /// says (`setReadingPaused(false)`, after this).
    func begin(_ agreement: WebSocketAgreement, events: @escaping @Sendable (Event) -> Void) {
        queue.async { [self] in
            guard machine.phase == .handshaking, exchange == nil else {
                return events(.ended(machine.ending ?? .failed(.cancelled(.explicit))))
            }
            self.events = events
            if let agreed = agreement.deflate {
                do throws(TernError) {
                    deflate = try WebSocketDeflate(agreed)
                } catch {
                    return carryOut(machine.fail(error))
                }
                reader.deflate = deflate
                sendBuffer.withLock { $0.deflates = true }
            }
            carryOut(machine.upgraded())
            events(.opened(subprotocol: agreement.subprotocol))
            for (frames, done) in unsent { write(frames, done: done) }
            unsent = []
            if !leftover.isEmpty { frameBytes(leftover) }
            leftover = Data()
        }
    }

    // MARK: What the socket asks

    /// Sends `message`; `done` runs at once, on the caller's thread, when the send buffer has
    /// room for it (a write that fails later ends the socket); else once it is written, or with
    /// why it was not.
    func send(_ message: WebSocketMessage, done: @escaping @Sendable (TernError?) -> Void) {
        // The buffer counts payload bytes; one lock take decides and says whether to compress.
        let size = message.byteCount
        let (accepted, deflates) = sendBuffer.withLock { buffer in
            guard buffer.isOpen, buffer.bytes == 0 || buffer.bytes + size <= options.sendBufferSize else { return (false, buffer.deflates) }
            buffer.bytes += size
            return (true, buffer.deflates)
        }
        // Compressed messages are framed on the queue, in the order they are written: the
        // compressor's window runs across messages. The others are framed on the caller's thread.
        let framed = deflates ? nil : Self.frames(message)
        if accepted { done(nil) }
        queue.async { [self] in
            let frames = framed ?? Self.frames(message, deflate: deflate)
            guard accepted else { return write(frames, done: done) }
            write(frames) { [sendBuffer] _ in sendBuffer.withLock { $0.bytes -= size } }
        }
    }

    /// Pings the server; `done` runs when its pong comes, or with `.timedOut` after `pongTimeout`.
    func ping(done: @escaping @Sendable (TernError?) -> Void) {
        queue.async { [self] in sendPing(done: done) }
    }

    /// Starts the close handshake with `code` and `reason` (at most 123 bytes of UTF-8).
    func close(_ code: WebSocketCloseCode, reason: String) {
        // A message sent after this call must not be accepted before the close runs.
        sendBuffer.withLock { $0.isOpen = false }
        queue.async { [self] in carryOut(machine.closeRequested(code, reason: reason)) }
    }

    /// Ends the socket at once with `error` (a cancel), saying 1001 first when open, without waiting.
    func abort(_ error: TernError) {
        queue.async { [self] in carryOut(machine.fail(error)) }
    }

    /// Stops (or resumes) reading from the connection: the reader of the messages fell behind.
    func setReadingPaused(_ paused: Bool) { stream.setReadingPaused(paused) }

    /// The code of the close frame Tern wrote (the app's close, the answer to the server's, or
    /// the code of the server's violation); nil when it wrote none.
    var sentCloseCode: WebSocketCloseCode? { sentClose.withLock { $0 } }

    // MARK: Carrying out what the state machine decides

    private func carryOut(_ action: WebSocketStateMachine.Action) {
        queue.assertIsCurrent()
        switch action {
        case .none:
            break
        case .connect:
            stream.open { event in self.streamEvent(event) }
        case .writeUpgrade:
            guard let request, let url = request.url else { return }
            stream.write(handshake.requestHead(for: url, headers: request.allHTTPHeaderFields ?? [:])) { _ in }
        case .open:
            sendBuffer.withLock { $0.isOpen = true }
            startHeartbeat()
        case .writeClose(let code, let reason):
            sendBuffer.withLock { $0.isOpen = false }
            writeClose(code, reason)
            let seconds = options.closeTimeout
            closeTimer = after(seconds) { [self] in carryOut(machine.closeTimedOut(after: seconds)) }
        case .end(let ending, let code, let reason, let drains):
            if let code { writeClose(code, reason) }
            ended(ending, drains: drains)
        case .release(let ending):
            release(ending)
        }
    }

    // MARK: The stream's events

    private func streamEvent(_ event: WebSocketStreamEvent) {
        queue.assertIsCurrent()
        switch event {
        case .opened: carryOut(machine.connected())
        case .received(let bytes): received(bytes)
        case .ended where machine.phase == .handshaking && refusal != nil: finishRefusalIfComplete(ended: true)
        case .ended(let error): carryOut(machine.streamEnded(error))
        }
    }

    private func received(_ bytes: Data) {
        switch machine.phase {
        case .handshaking: handshakeBytes(bytes)
        case .open, .closing: frameBytes(bytes)
        case .idle, .connecting, .draining, .ended: break  // a drain discards what comes
        }
    }

    private func handshakeBytes(_ bytes: Data) {
        guard let exchange else { return leftover.append(bytes) }  // parked: frames, for when the socket begins
        exchange(.receiving(0))  // a sign of life: the call's idle timeout counts from here
        if var refused = refusal {
            refused.body.append(contentsOf: bytes)
            refusal = refused
            return finishRefusalIfComplete()
        }
        headBytes.append(contentsOf: bytes)
        do {
            guard let head = try RawResponseHead.parse(headBytes) else { return }
            let rest = Array(headBytes[head.length...])
            headBytes = []
            exchange(.head(ResponseHead(url: request?.url, statusCode: head.status, headerFields: head.headers)))
            guard head.status == 101 else {
                refusal = (head, rest)
                return finishRefusalIfComplete()
            }
            // The call checks the 101 (its serializer) and the socket begins, or discards it;
            // meanwhile nothing more is read (a server may send frames at once, and without end).
            stream.setReadingPaused(true)
            leftover = Data(rest)
            park?(self)
            // The call has its answer: nothing of it stays with the connection.
            (self.exchange, park, request) = (nil, nil, nil)
            exchange(.completed(nil))
        } catch {
            if case .invalid(let failure) = error { carryOut(machine.fail(.webSocketHandshakeFailed(failure))) }
        }
    }

    /// A refused handshake's answer is the call's response: its body (up to 64 KB) once whole,
    /// then the connection closes.
    private func finishRefusalIfComplete(ended: Bool = false) {
        guard let (head, body) = refusal, let exchange else { return }
        let length = head.headers.first { $0.key.lowercased() == "content-length" }.flatMap { Int($0.value) }
        if !ended, let length, body.count < min(length, 64 << 10) { return }
        exchange(.data(Data(body.prefix(min(length ?? body.count, 64 << 10)))))
        self.exchange = nil
        exchange(.completed(nil))
        carryOut(machine.fail(.cancelled(.explicit)))  // reported to no one: the call has its answer
    }

    private func frameBytes(_ bytes: Data) {
        reader.append(bytes)
        do {
            while machine.phase == .open || machine.phase == .closing, let incoming = try reader.next() {
                switch incoming {
                case .message(let message): if machine.phase == .open { events?(.message(message)) }
                case .ping(let payload): writeControl(.pong, payload)
                case .pong(let payload): pong(payload)
                case .close(let code, let reason): carryOut(machine.closeFrameReceived(code, reason: reason))
                }
            }
        } catch {
            carryOut(machine.violation(error))
        }
    }

    // MARK: Writing

    private func write(_ frames: Data, done: @escaping @Sendable (TernError?) -> Void) {
        queue.assertIsCurrent()
        switch machine.phase {
        case .idle, .connecting, .handshaking:
            unsent.append((frames, done))
        case .open:
            // A write the socket's end cut short reports that end (a cancel, say), not the
            // connection's closing under it.
            stream.write(frames) { [self] error in done(error.map { machine.ending.map(WebSocket.error(of:)) ?? .transport($0) }) }
        case .closing, .draining, .ended:
            done(notOpen("the WebSocket is closed"))
        }
    }

    /// Why a write or ping finds the socket not open: its ending, once decided.
    private func notOpen(_ reason: String) -> TernError {
        machine.ending.map(WebSocket.error(of:)) ?? .webSocketFailed(code: machine.sentClose?.code ?? .normalClosure, reason: reason)
    }

    /// Writes a close frame with `code` and `reason`, and remembers the code (`sentCloseCode`);
    /// no code (the server's close frame had none) answers with an empty close frame.
    private func writeClose(_ code: WebSocketCloseCode, _ reason: String) {
        guard code != .noStatusReceived else { return writeControl(.close, Data()) }
        sentClose.withLock { $0 = $0 ?? code }
        writeControl(.close, Self.closePayload(code, reason))
    }

    private func writeControl(_ opcode: WebSocketFrame.Opcode, _ payload: Data) {
        let frame = WebSocketFrame(isFinal: true, opcode: opcode, payload: payload.prefix(125))
        stream.write(frame.encoded(mask: WebSocketMaskKeys.next())) { _ in }
    }

    // MARK: Pings and the heartbeat

    private func sendPing(done: @escaping @Sendable (TernError?) -> Void) {
        guard machine.phase == .open else { return done(notOpen("the WebSocket is not open")) }
        pingCounter += 1
        let payload = withUnsafeBytes(of: pingCounter.bigEndian) { Data($0) }
        pings.append((payload, done))
        writeControl(.ping, payload)
        if pongTimer == nil {
            let seconds = options.pongTimeout
            pongTimer = after(seconds) { [self] in carryOut(machine.fail(.timedOut(after: seconds))) }
        }
    }

    /// A pong answers its ping and every older one (§5.5.3: a pong may answer only the latest).
    private func pong(_ payload: Data) {
        guard let index = pings.firstIndex(where: { $0.payload == payload }) else { return }
        let answered = pings[...index]
        pings.removeFirst(index + 1)
        if pings.isEmpty {
            pongTimer?.cancel()
            pongTimer = nil
        }
        for ping in answered { ping.done(nil) }
    }

    private func startHeartbeat() {
        guard let interval = options.pingInterval, interval > 0, interval.isFinite else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(100))
        timer.setEventHandler { [weak self] in
            guard let self, self.pings.isEmpty else { return }
            self.sendPing { _ in }
        }
        timer.resume()
        heartbeat = timer
    }

    private func after(_ seconds: TimeInterval, _ body: @escaping () -> Void) -> DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + seconds)
        timer.setEventHandler(handler: body)
        timer.resume()
        return timer
    }

    // MARK: The end

    /// The ending is decided: every timer stops and what waits fails. With `drains`, after a close
    /// frame on a live connection: stops writing and reads on, discarding, until the server closes
    /// or `closeTimeout` passes; the ending is reported once the connection is released.
    private func ended(_ ending: WebSocketEnding, drains: Bool) {
        sendBuffer.withLock { $0.isOpen = false }
        for timer in [pongTimer, heartbeat, closeTimer] { timer?.cancel() }
        (pongTimer, heartbeat, closeTimer) = (nil, nil, nil)
        let error = WebSocket.error(of: ending)
        for (_, done) in unsent { done(error) }
        for ping in pings { ping.done(error) }
        (unsent, pings) = ([], [])
        guard drains else { return release(ending) }
        stream.finishWriting()
        stream.setReadingPaused(false)
        let seconds = options.closeTimeout
        closeTimer = after(seconds) { [self] in carryOut(machine.closeTimedOut(after: seconds)) }
    }

    /// Closes the connection and reports `ending` once it is freed (see `WebSocketByteStream.close`):
    /// to the call, while the upgrade has no answer yet; else to the socket, once it has begun.
    private func release(_ ending: WebSocketEnding) {
        closeTimer?.cancel()
        closeTimer = nil
        stream.close { [self] in
            if let exchange {
                self.exchange = nil
                exchange(.completed(Self.exchangeError(ending)))
            } else {
                events?(.ended(ending))
            }
        }
    }

    /// How an opening that ended before its answer fails its call.
    private static func exchangeError(_ ending: WebSocketEnding) -> URLError {
        switch ending {
        case .failed(.transport(let error)): error
        case .failed(.cancelled): URLError(.cancelled)
        case .failed(.webSocketFailed(.abnormalClosure, _)): URLError(.networkConnectionLost)
        case .failed(let error): WebSocketUpgrade.urlError(error)
        case .closed: URLError(.networkConnectionLost)
        }
    }
}

extension WebSocketConnection: TransportTask {
    /// The call gave up on the opening (a cancel, its timeout or deadline). Once the upgrade has
    /// its answer the exchange is over: a late cancel does nothing (a discarded 101 is aborted).
    func cancel() {
        queue.async { [self] in if exchange != nil { carryOut(machine.fail(.cancelled(.explicit))) } }
    }
}
