import Foundation

/// One WebSocket's protocol over its byte stream: the opening handshake, frames in and out, pings
/// and the heartbeat, the close handshake both ways, and its one ending.
///
/// The server's protocol mistakes close the socket with their code (1002, 1007, 1009) and end it
/// with `TernError.webSocketFailed`; a server's close frame is answered with the same code and
/// ends it as `.closed`; a connection that ends without a close frame is `.abnormalClosure`, and
/// a close the server never answers `.timedOut`. Opening is bounded by the request's `timeout`
/// (silence) and `deadline` (connect to 101). After Tern wrote a close frame it stops writing
/// and reads on, discarding, until the server closes (or `closeTimeout`): closing a socket the
/// peer still writes to would answer it with a reset, and the peer would never read the frame.
/// Thread safety: every mutable property is touched only on `queue`, where the stream's events
/// arrive; the public side reaches it through `queue.async`, and `send` reads the locked
/// `sendBuffer` to return without waiting for the queue.
// Sendable: all mutable state is confined to `queue`, but `sendBuffer`, which is locked.
final class WebSocketConnection: @unchecked Sendable {
    typealias Event = WebSocketDriverEvent

    /// Frames larger than this go out in fragments (RFC 6455 §5.4).
    static let fragmentSize = 1 << 20

    let queue: DispatchQueue
    let options: WebSocketOptions
    private let stream: any WebSocketByteStream
    private let handshake: WebSocketHandshake
    /// The handshake's URL, `http(s)`: what the upgrade request asks for and errors name.
    private let url: URL
    private var headers: [String: String]
    private let events: @Sendable (Event) -> Void

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
    /// The opening's clocks: silence (re-armed as bytes arrive) and the whole opening.
    private var openingIdleTimer: DispatchSourceTimer?
    private var openingDeadlineTimer: DispatchSourceTimer?
    /// The request's `timeout` and `deadline`, in seconds (`.infinity`: none), for the opening.
    private let openingLimits: (idle: TimeInterval, deadline: TimeInterval)
    /// The code of the close frame Tern wrote, if it wrote one.
    private let sentClose = Locked<WebSocketCloseCode?>(nil)
    /// Bytes accepted by `send` and not yet written, and whether `send` may accept more without
    /// the queue (only while open: before, messages wait for the handshake; after, they fail).
    private let sendBuffer = Locked((bytes: 0, isOpen: false, deflates: false))
    /// The agreed permessage-deflate, set when the socket opens; nil when none was.
    private var deflate: WebSocketDeflate?
    /// One socket to a host connects at a time (RFC 6455 §4.1): its place there until it opens or ends.
    private let gate: WebSocketConnectGate
    private var ticket: WebSocketConnectGate.Ticket?

    init(
        stream: any WebSocketByteStream, queue: DispatchQueue, url: URL, headers: [String: String], options: WebSocketOptions,
        openingLimits: (idle: TimeInterval, deadline: TimeInterval) = (.infinity, .infinity),
        gate: WebSocketConnectGate = .shared, events: @escaping @Sendable (Event) -> Void
    ) {
        self.openingLimits = openingLimits
        self.gate = gate
        self.stream = stream
        self.queue = queue
        self.url = url
        self.headers = headers
        self.options = options
        self.events = events
        handshake = WebSocketHandshake(protocols: options.protocols, offersDeflate: options.compression == .permessageDeflate)
        reader = WebSocketMessageReader(maximumMessageSize: options.maximumMessageSize, maximumFrameSize: options.maximumMessageSize)
    }

    // MARK: What the socket asks

    /// Connects and opens the WebSocket, with `headers` in place of the request's (what its
    /// adapters made of them) when given, once no other socket to its host is connecting. The
    /// stream holds the connection until it ends.
    func open(headers adapted: [String: String]?) {
        queue.async { [self] in
            if let adapted, machine.phase == .idle { headers = adapted }
            carryOut(machine.start())
        }
    }

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
        switch action {
        case .none:
            break
        case .connect:
            ticket = gate.enter(WebSocketConnectGate.key(for: url)) {
                self.queue.async {
                    guard self.machine.phase == .connecting else { return }
                    self.armOpeningClocks()
                    self.stream.open { event in self.streamEvent(event) }
                }
            }
        case .writeUpgrade:
            restartOpeningIdle()
            stream.write(handshake.requestHead(for: url, headers: headers)) { _ in }
        case .open:
            stopOpeningClocks()
            leaveGate()
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
        restartOpeningIdle()
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
            do {
                let chosen = try handshake.check(status: head.status, headers: head.headers)
                if let agreed = WebSocketHandshake.agreedDeflate(head.headers) {
                    do {
                        deflate = try WebSocketDeflate(agreed)
                    } catch {
                        return carryOut(machine.fail(error))
                    }
                    reader.deflate = deflate
                    sendBuffer.withLock { $0.deflates = true }
                }
                carryOut(machine.upgraded())
                events(.opened(subprotocol: chosen))
                for (frames, done) in unsent { write(frames, done: done) }
                unsent = []
                if !rest.isEmpty { frameBytes(Data(rest)) }
            } catch .status {
                refusal = (head, rest)
                finishRefusalIfComplete()
            }
        } catch {
            if case .invalid(let failure) = error { carryOut(machine.fail(.webSocketHandshakeFailed(failure))) }
        }
    }

    /// A refused handshake ends with the status, headers and body (up to 64 KB) of the answer.
    private func finishRefusalIfComplete(ended: Bool = false) {
        guard let (head, body) = refusal else { return }
        let length = head.headers.first { $0.key.lowercased() == "content-length" }.flatMap { Int($0.value) }
        if !ended, let length, body.count < min(length, 64 << 10) { return }
        let kept = Data(body.prefix(min(length ?? body.count, 64 << 10)))
        let line = RequestLine(method: "GET", url: url)
        carryOut(machine.fail(.unacceptableStatus(code: head.status, body: kept, headers: head.headers, request: line)))
    }

    private func frameBytes(_ bytes: Data) {
        reader.append(bytes)
        do {
            while machine.phase == .open || machine.phase == .closing, let incoming = try reader.next() {
                switch incoming {
                case .message(let message): if machine.phase == .open { events(.message(message)) }
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

    /// Starts the opening's clocks as the connect starts (not while waiting at the gate).
    private func armOpeningClocks() {
        let deadline = openingLimits.deadline
        if deadline.isFinite, deadline > 0 {
            openingDeadlineTimer = after(deadline) { [self] in carryOut(machine.fail(.deadlineExceeded(after: deadline))) }
        }
        restartOpeningIdle()
    }

    /// Bytes arrived (or the connection did) while opening: the silence counts again from now.
    private func restartOpeningIdle() {
        let idle = openingLimits.idle
        guard idle.isFinite, idle > 0 else { return }
        openingIdleTimer?.cancel()
        openingIdleTimer = after(idle) { [self] in carryOut(machine.fail(.timedOut(after: idle))) }
    }

    private func stopOpeningClocks() {
        for timer in [openingIdleTimer, openingDeadlineTimer] { timer?.cancel() }
        (openingIdleTimer, openingDeadlineTimer) = (nil, nil)
    }

    /// Lets the next socket to this host connect (or leaves the line, when still waiting).
    private func leaveGate() {
        guard let ticket else { return }
        self.ticket = nil
        gate.leave(ticket)
    }

    // MARK: The end

    /// The ending is decided: every timer stops and what waits fails. With `drains`, after a close
    /// frame on a live connection: stops writing and reads on, discarding, until the server closes
    /// or `closeTimeout` passes; the ending is reported once the connection is released.
    private func ended(_ ending: WebSocketEnding, drains: Bool) {
        leaveGate()
        stopOpeningClocks()
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

    /// Closes the connection and reports `ending` once it is freed (see `WebSocketByteStream.close`).
    private func release(_ ending: WebSocketEnding) {
        closeTimer?.cancel()
        closeTimer = nil
        stream.close { [events] in events(.ended(ending)) }
    }
}
