import Foundation
import Tern

/// What a stub WebSocket's server does: accept the handshake (choosing a subprotocol) or refuse
/// it, greet with messages, answer each message the app sends, close or fail — no server, the
/// same on every platform.
/// ```swift
/// stubs.stubWebSocket(.get("/v1/live"), StubWebSocket(greeting: [.text("hello")]) { message in
///     message == .text("subscribe") ? [.send(.text("3°C"))] : [.close(.policyViolation, reason: "unknown")]
/// })
/// ```
/// Thread safety: a value type, safe to share.
public struct StubWebSocket: Sendable {
    /// What the server does in answer to a message.
    public enum Action: Sendable, Equatable {
        /// Sends a message to the app.
        case send(WebSocketMessage)
        /// Closes the socket with a code and reason.
        case close(WebSocketCloseCode, reason: String)
        /// Drops the connection, as a network failure would.
        case fail(URLError.Code)
        /// Waits this many seconds before the actions after it (a server that pushes at its own
        /// pace). What follows a close or a failure is not done.
        case wait(TimeInterval)
    }

    /// The subprotocol chosen when the app offers it; nil chooses none.
    public var subprotocol: String?
    /// Refuses the handshake with this response's status, headers and body instead of opening.
    public var refusal: StubResponse?
    /// What the server does as soon as the socket opens.
    public var greeting: [Action]
    /// What the server does with each message the app sends; nil ignores them.
    public var reply: (@Sendable (WebSocketMessage) -> [Action])?

    /// A stub socket; every parameter defaults to nothing.
    public init(
        subprotocol: String? = nil, refusal: StubResponse? = nil, greeting: [Action] = [],
        reply: (@Sendable (WebSocketMessage) -> [Action])? = nil
    ) {
        self.subprotocol = subprotocol
        self.refusal = refusal
        self.greeting = greeting
        self.reply = reply
    }

    /// A server that sends every message back.
    public static let echo = StubWebSocket { [.send($0)] }
}

extension StubTransport: WebSocketServing, WebSocketTransport {
    /// Serves the socket here: its stubs answer the client's WebSockets.
    public func openWebSocket(_ attempt: WebSocketAttempt) -> (any TransportTask)? { attempt.serve(by: self) }

    /// Answers WebSockets whose upgrade request matches `matcher` with `socket`. Later stubs win;
    /// a socket no stub matches is refused with 404.
    public func stubWebSocket(_ matcher: StubMatcher, _ socket: StubWebSocket) {
        webSocketStubs.withLock { $0.append((matcher, socket)) }
    }

    /// Serves a stub socket through `peer` (Tern calls this for each socket of a client using this
    /// transport); the upgrade request is recorded with the others.
    public func serveWebSocket(_ request: URLRequest, protocols: [String], peer: WebSocketPeer) -> Bool {
        record(request)
        guard let socket = webSocketStubs.withLock({ $0.last { $0.matcher.matches(request) }?.socket }) else { return false }
        if let refusal = socket.refusal {
            peer.refuse(status: refusal.status, headers: refusal.headers, body: refusal.body)
            return true
        }
        let reply = socket.reply
        peer.onMessage { message in Self.run(reply?(message) ?? [], on: peer) }
        peer.accept(subprotocol: socket.subprotocol.flatMap { protocols.contains($0) ? $0 : nil })
        Self.run(socket.greeting, on: peer)
        return true
    }

    /// Does `actions` in order; after a `.wait`, the rest runs once the time has passed.
    private static func run(_ actions: [StubWebSocket.Action], on peer: WebSocketPeer) {
        for (index, action) in actions.enumerated() {
            switch action {
            case .send(let message): peer.send(message)
            case .close(let code, let reason): return peer.close(code: code, reason: reason)
            case .fail(let code): return peer.fail(URLError(code))
            case .wait(let seconds):
                let rest = Array(actions[(index + 1)...])
                guard !rest.isEmpty else { return }
                DispatchQueue.global().asyncAfter(deadline: .now() + max(0, seconds)) { run(rest, on: peer) }
                return
            }
        }
    }
}
