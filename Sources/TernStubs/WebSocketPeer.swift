import Foundation
import Tern

/// A server that answers WebSockets in the same process, without a connection (TernStubs'
/// `StubTransport`): a `WebSocketTransport` hands it each attempt with `attempt.serve(by:)`.
public protocol WebSocketServing: Sendable {
    /// Serves the WebSocket that `request` opens (offering `protocols`) through `peer`, the
    /// server's end; returns false when it serves none there (the socket then fails as a refused
    /// handshake, 404).
    func serveWebSocket(_ request: URLRequest, protocols: [String], peer: WebSocketPeer) -> Bool
}

/// The server's end of a WebSocket served in the same process (`WebSocketServing`): accept or
/// refuse the handshake, send messages, close or fail — and hear what the client sends.
/// Thread safety: safe to use from any thread; the client's messages and close arrive one at a
/// time, in order.
// Sendable: every mutable property is touched only on `queue`.
// Debug builds check the confinement (`queue.assertIsCurrent()`).
public final class WebSocketPeer: WebSocketDriver, @unchecked Sendable {
    private let queue = DispatchQueue(label: "Tern.WebSocketPeer")
    private let serving: any WebSocketServing
    private let attempt: WebSocketAttempt
    /// The call's exchange, until the handshake has its answer.
    private var exchange: (@Sendable (TransportEvent) -> Void)?
    /// The socket's events once it began; what the server did before that waits in `early`.
    private var events: (@Sendable (WebSocketDriverEvent) -> Void)?
    private var early: [WebSocketDriverEvent] = []
    private var isOpen = false
    private var hasEnded = false
    private var onMessage: (@Sendable (WebSocketMessage) -> Void)?
    private var onClose: (@Sendable (WebSocketCloseCode, String) -> Void)?
    private let sentClose = Locked<WebSocketCloseCode?>(nil)

    package var sentCloseCode: WebSocketCloseCode? { sentClose.withLock { $0 } }

    fileprivate init(serving: any WebSocketServing, attempt: WebSocketAttempt) {
        self.serving = serving
        self.attempt = attempt
        exchange = attempt.exchange
    }

    // MARK: The server's side

    /// Calls `handler` with each message the client sends.
    public func onMessage(_ handler: @escaping @Sendable (WebSocketMessage) -> Void) { queue.async { self.onMessage = handler } }

    /// Calls `handler` when the client closes the socket (its code and reason); the peer answers
    /// the close itself.
    public func onClose(_ handler: @escaping @Sendable (WebSocketCloseCode, String) -> Void) { queue.async { self.onClose = handler } }

    /// Completes the handshake, choosing `subprotocol` (one the client offered, or nil).
    public func accept(subprotocol: String? = nil) {
        queue.async { [self] in
            guard let exchange, !hasEnded else { return }
            var headers = ["Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Accept": attempt.acceptKey]
            headers["Sec-WebSocket-Protocol"] = subprotocol
            self.exchange = nil
            isOpen = true
            attempt.park(self)
            exchange(.head(ResponseHead(url: attempt.request.url, statusCode: 101, headerFields: headers)))
            exchange(.completed(nil))
        }
    }

    /// Refuses the handshake with `status` (not 101), `headers` and `body`.
    public func refuse(status: Int, headers: [String: String] = [:], body: Data = Data()) {
        queue.async { [self] in
            guard let exchange else { return }
            self.exchange = nil
            hasEnded = true
            exchange(.head(ResponseHead(url: attempt.request.url, statusCode: status, headerFields: headers)))
            exchange(.data(body))
            exchange(.completed(nil))
        }
    }

    /// Sends `message` to the client.
    public func send(_ message: WebSocketMessage) {
        queue.async { [self] in if isOpen, !hasEnded { emit(.message(message)) } }
    }

    /// Closes the socket from the server's side with `code` and `reason`.
    public func close(code: WebSocketCloseCode, reason: String = "") {
        queue.async { [self] in end(.closed(code, reason: reason)) }
    }

    /// Drops the connection with `error`, as a network failure would.
    public func fail(_ error: URLError) {
        queue.async { [self] in end(.failed(.transport(error))) }
    }

    // MARK: The client's side

    /// Hands the upgrade to the server (a socket's call's exchange).
    fileprivate func upgrade() {
        if !serving.serveWebSocket(attempt.request, protocols: attempt.offeredProtocols, peer: self) {
            refuse(status: 404, body: Data("no stub socket".utf8))
        }
    }

    package func begin(_ agreement: WebSocketAgreement, events: @escaping @Sendable (WebSocketDriverEvent) -> Void) {
        queue.async { [self] in
            self.events = events
            events(.opened(subprotocol: agreement.subprotocol))
            for event in early { events(event) }
            early = []
        }
    }

    package func send(_ message: WebSocketMessage, done: @escaping @Sendable (TernError?) -> Void) {
        queue.async { [self] in
            guard isOpen, !hasEnded else { return done(.webSocketFailed(code: .normalClosure, reason: "the WebSocket is not open")) }
            onMessage?(message)
            done(nil)
        }
    }

    package func ping(done: @escaping @Sendable (TernError?) -> Void) {
        queue.async { [self] in
            done(isOpen && !hasEnded ? nil : .webSocketFailed(code: .normalClosure, reason: "the WebSocket is not open"))
        }
    }

    package func close(_ code: WebSocketCloseCode, reason: String) {
        queue.async { [self] in
            guard !hasEnded else { return }
            sentClose.withLock { $0 = code }
            onClose?(code, reason)
            end(.closed(code, reason: reason))
        }
    }

    package func abort(_ error: TernError) { queue.async { [self] in end(.failed(error)) } }

    /// The call gave up on the handshake; once it has its answer, this does nothing.
    fileprivate func cancelUpgrade() { queue.async { [self] in if exchange != nil { end(.failed(.cancelled(.explicit))) } } }

    package func setReadingPaused(_ paused: Bool) {}

    private func emit(_ event: WebSocketDriverEvent) {
        queue.assertIsCurrent()
        if let events { events(event) } else { early.append(event) }
    }

    private func end(_ ending: WebSocketEnding) {
        queue.assertIsCurrent()
        guard !hasEnded else { return }
        hasEnded = true
        isOpen = false
        (onMessage, onClose) = (nil, nil)
        if let exchange {
            self.exchange = nil
            if case .failed(.transport(let error)) = ending { return exchange(.completed(error)) }
            return exchange(.completed(URLError(.cancelled)))
        }
        emit(.ended(ending))
    }
}

extension WebSocketAttempt {
    /// Answers the attempt in the process: `server` accepts or refuses it through a
    /// `WebSocketPeer`, the server's end, with no connection (a `WebSocketTransport` that serves
    /// its sockets itself returns this from `openWebSocket(_:)`).
    public func serve(by server: any WebSocketServing) -> any TransportTask {
        let peer = WebSocketPeer(serving: server, attempt: self)
        peer.upgrade()
        return PeerUpgrade(peer: peer)
    }
}

/// A socket's upgrade served in the process, as its call's exchange.
private struct PeerUpgrade: TransportTask {
    let peer: WebSocketPeer

    func cancel() { peer.cancelUpgrade() }
}
