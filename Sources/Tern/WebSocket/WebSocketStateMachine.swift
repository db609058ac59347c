import Foundation

/// One WebSocket connection's state, as a value: each event, in each phase, answers with what the
/// connection carries out. No I/O, no timers, no locks: `WebSocketConnection` owns one and feeds it
/// on its queue; the table test and a randomized run check it without sockets.
///
/// `idle → connecting → handshaking → open → closing → draining → ended`; any live phase may end
/// early. An ending is decided once (`ending`), and after a close frame on a live connection the
/// connection drains (reads on until the server closes, or `closeTimeout`) before it is released.
/// Thread safety: a value type, changed on its connection's queue only.
struct WebSocketStateMachine: Sendable, Equatable {
    enum Phase: Sendable, Equatable {
        case idle, connecting, handshaking, open, closing, draining, ended
    }

    /// What the connection does after an event.
    enum Action: Sendable, Equatable {
        case none
        /// Wait for the host's turn (RFC 6455 §4.1), then connect, with the opening's clocks.
        case connect
        /// Connected: write the upgrade request.
        case writeUpgrade
        /// The 101 passed its checks: stop the opening's clocks, start the heartbeat, send what waited.
        case open
        /// The app closes: write this close frame and wait up to `closeTimeout` for the server's.
        case writeClose(WebSocketCloseCode, reason: String)
        /// The socket's ending is decided: stop every timer and fail what waits; write `close` if
        /// given; then drain (`drains`: read on until the server closes or `closeTimeout`) or
        /// release at once.
        case end(WebSocketEnding, close: WebSocketCloseCode?, reason: String, drains: Bool)
        /// The drain is over: close the connection and report the ending.
        case release(WebSocketEnding)
    }

    private(set) var phase = Phase.idle
    /// How the socket ended, once decided.
    private(set) var ending: WebSocketEnding?
    /// The close frame Tern wrote, if any.
    private(set) var sentClose: (code: WebSocketCloseCode, reason: String)?

    /// The one place that answers "has it ended?": its ending is decided (it may still drain).
    var hasEnded: Bool { ending != nil }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.phase == rhs.phase && lhs.ending == rhs.ending && lhs.sentClose?.code == rhs.sentClose?.code
            && lhs.sentClose?.reason == rhs.sentClose?.reason
    }

    // MARK: Events

    /// The socket asks to open.
    mutating func start() -> Action {
        guard phase == .idle else { return .none }
        phase = .connecting
        return .connect
    }

    /// The byte stream connected (TLS included).
    mutating func connected() -> Action {
        guard phase == .connecting else { return .none }
        phase = .handshaking
        return .writeUpgrade
    }

    /// The server's 101 passed every check.
    mutating func upgraded() -> Action {
        guard phase == .handshaking else { return .none }
        phase = .open
        return .open
    }

    /// The app's `close`: a handshake when open; a cancel before that (nothing was open to close).
    mutating func closeRequested(_ code: WebSocketCloseCode, reason: String) -> Action {
        switch phase {
        case .idle, .connecting, .handshaking:
            return finish(.failed(.cancelled(.explicit)))
        case .open:
            phase = .closing
            sentClose = (code, reason)
            return .writeClose(code, reason: reason)
        case .closing, .draining, .ended:
            return .none
        }
    }

    /// The server's close frame (`code` nil when it had none): answered with the same code when
    /// open, then drained.
    mutating func closeFrameReceived(_ code: WebSocketCloseCode?, reason: String) -> Action {
        switch phase {
        case .open: return finish(.closed(code ?? .noStatusReceived, reason: reason), close: code ?? .noStatusReceived, reason: "")
        case .closing: return finish(.closed(code ?? .noStatusReceived, reason: reason), drains: true)
        case .idle, .connecting, .handshaking, .draining, .ended: return .none
        }
    }

    /// The server broke the protocol: closed with the violation's code (when open), then drained.
    mutating func violation(_ violation: WebSocketViolation) -> Action {
        let ending = WebSocketEnding.failed(.webSocketFailed(code: violation.code, reason: violation.reason))
        switch phase {
        case .open: return finish(ending, close: violation.code, reason: violation.reason)
        case .closing: return finish(ending, drains: true)
        case .idle, .connecting, .handshaking, .draining, .ended: return .none
        }
    }

    /// The socket fails with `error` at once (a refused or broken handshake, a timeout, a missing
    /// pong, a cancel); an open socket says 1001 first, without waiting.
    mutating func fail(_ error: TernError) -> Action {
        switch phase {
        case .open: return finish(.failed(error), close: .goingAway, reason: "", drains: false)
        case .idle, .connecting, .handshaking, .closing: return finish(.failed(error))
        case .draining, .ended: return .none
        }
    }

    /// The byte stream ended: the server closed the connection (`error` nil) or it failed.
    mutating func streamEnded(_ error: URLError?) -> Action {
        switch phase {
        case .idle, .connecting, .handshaking, .open, .closing:
            if let error { return finish(.failed(.transport(error))) }
            let before = phase == .closing ? "before the server's close frame" : "without a close frame"
            return finish(.failed(.webSocketFailed(code: .abnormalClosure, reason: "the connection ended \(before)")))
        case .draining:
            return released()
        case .ended:
            return .none
        }
    }

    /// `closeTimeout` passed: the server never answered the app's close, or never closed after
    /// the close handshake.
    mutating func closeTimedOut(after seconds: TimeInterval) -> Action {
        switch phase {
        case .closing: return finish(.failed(.timedOut(after: seconds)))
        case .draining: return released()
        case .idle, .connecting, .handshaking, .open, .ended: return .none
        }
    }

    // MARK: The end

    private mutating func finish(
        _ ending: WebSocketEnding, close: WebSocketCloseCode? = nil, reason: String = "", drains: Bool? = nil
    ) -> Action {
        self.ending = ending
        if let close { sentClose = sentClose ?? (close, reason) }
        // A close frame of ours on a live connection is drained, unless the socket fails at once.
        let drains = drains ?? (close != nil)
        phase = drains ? .draining : .ended
        return .end(ending, close: close, reason: reason, drains: drains)
    }

    private mutating func released() -> Action {
        phase = .ended
        return ending.map { .release($0) } ?? .none
    }
}
