import Foundation

/// How a WebSocket behaves: the subprotocols it offers, its limits, its heartbeat.
/// Thread safety: a value type, safe to share.
public struct WebSocketOptions: Sendable, Equatable {
    /// Subprotocols to offer (`Sec-WebSocket-Protocol`), in order of preference; the one the server
    /// chose is `WebSocket.subprotocol`. Default none.
    public var protocols: [String]
    /// The largest message taken, its fragments together; a larger one closes the socket with
    /// 1009 (message too big). Default 16 MiB.
    public var maximumMessageSize: Int
    /// Received messages kept while nobody reads them, in bytes; past it Tern stops reading from
    /// the connection until the reader catches up. Default 4 MiB (at least one message is kept).
    public var receiveBufferSize: Int
    /// Bytes sent and not yet written to the connection: while they stay under it, `send` returns
    /// at once; past it, `send` waits until its message is written, so a sender faster than the
    /// network is held back instead of growing memory. Default 1 MiB (a larger message waits
    /// alone).
    public var sendBufferSize: Int
    /// Seconds between pings while the socket is open; nil for none. Default 30.
    public var pingInterval: TimeInterval?
    /// Seconds a ping (the heartbeat's or `ping()`) waits for its pong before the socket fails with
    /// `TernError.timedOut`. Default 10.
    public var pongTimeout: TimeInterval
    /// Seconds `close` waits for the server's close frame before the socket fails with
    /// `TernError.timedOut`; and, after a close frame of Tern's, the longest it reads on for the
    /// server to close the connection before releasing it. Default 5.
    public var closeTimeout: TimeInterval
    /// Whether the socket connects again after a failure a new connection may cure. Default
    /// `.never`.
    public var reconnect: WebSocketReconnectPolicy
    /// Whether messages are compressed when the server agrees (permessage-deflate, RFC 7692).
    /// Default `.disabled`: a compressing connection holds about 300 KB of zlib state.
    public var compression: WebSocketCompression

    /// Creates options; every default is listed on its property.
    public init(
        protocols: [String] = [], maximumMessageSize: Int = 16 << 20, receiveBufferSize: Int = 4 << 20,
        sendBufferSize: Int = 1 << 20, pingInterval: TimeInterval? = 30, pongTimeout: TimeInterval = 10,
        closeTimeout: TimeInterval = 5, reconnect: WebSocketReconnectPolicy = .never, compression: WebSocketCompression = .disabled
    ) {
        self.compression = compression
        self.sendBufferSize = sendBufferSize
        self.reconnect = reconnect
        self.protocols = protocols
        self.maximumMessageSize = maximumMessageSize
        self.receiveBufferSize = receiveBufferSize
        self.pingInterval = pingInterval
        self.pongTimeout = pongTimeout
        self.closeTimeout = closeTimeout
    }
}

/// Whether a WebSocket compresses its messages (`WebSocketOptions.compression`).
/// Thread safety: a value type, safe to share.
public enum WebSocketCompression: Sendable, Equatable {
    /// Nothing is offered; messages go as they are.
    case disabled
    /// permessage-deflate is offered (with `client_max_window_bits`); when the server agrees, each
    /// message is deflated both ways, over one sliding window unless the server asks for no context
    /// takeover. What a message inflates to counts against `maximumMessageSize` as it inflates.
    case permessageDeflate
}

/// How a WebSocket ended: its one terminal event.
/// Thread safety: a value type, safe to share.
public enum WebSocketEnding: Sendable, Equatable, CustomStringConvertible {
    /// Closed by a close handshake — the app's `close` or the server's close frame — with the
    /// code and reason of the close frame the server sent (`.noStatusReceived` when it had none).
    case closed(WebSocketCloseCode, reason: String)
    /// Failed: the handshake was refused (`.unacceptableStatus`) or its 101 broke the rules
    /// (`.webSocketHandshakeFailed`), the connection failed (`.transport`), the server broke the
    /// protocol or the connection ended without its close frame (`.webSocketFailed`), a pong, the
    /// server's answer to `close` or the opening did not come in time (`.timedOut`), the opening
    /// passed the request's deadline (`.deadlineExceeded`), or it was cancelled (`.cancelled`,
    /// also for `close` before the socket opened).
    case failed(TernError)

    /// `closed: 1000 (normal closure)`, with the reason after a comma; `failed: ` and the error.
    public var description: String {
        switch self {
        case .closed(let code, let reason): "closed: \(code)\(reason.isEmpty ? "" : ", \(reason)")"
        case .failed(let error): "failed: \(error)"
        }
    }

    /// Same kind, same code and reason, or errors with the same description.
    public static func == (lhs: WebSocketEnding, rhs: WebSocketEnding) -> Bool {
        switch (lhs, rhs) {
        case (.closed(let a, let x), .closed(let b, let y)): a == b && x == y
        case (.failed(let a), .failed(let b)): a.description == b.description
        default: false
        }
    }
}

/// What a WebSocket opened with an event handler reports, in order: `.opened`, each `.message`,
/// then `.ended` exactly once (`.ended` alone when it never opened).
/// Thread safety: a value type, safe to share.
public enum WebSocketEvent: Sendable, Equatable {
    /// The handshake succeeded; the subprotocol the server chose, if any.
    case opened(subprotocol: String?)
    /// A message from the server.
    case message(WebSocketMessage)
    /// The connection ended (`WebSocketOptions.reconnect`): reconnection number `attempt` starts
    /// after `after` seconds; `.opened` follows when it succeeds. Resubscribe there.
    case reconnecting(attempt: Int, after: TimeInterval)
    /// The socket's one ending.
    case ended(WebSocketEnding)
}

/// Receives a WebSocket's events on the callback queue (`Client.webSocket(_:options:delegate:)`).
/// Held weakly: a released delegate receives nothing more, and the socket runs on.
public protocol WebSocketDelegate: AnyObject, Sendable {
    /// The handshake succeeded; `subprotocol` is the one the server chose, if any.
    func webSocket(_ socket: WebSocket, didOpenWith subprotocol: String?)
    /// A message from the server.
    func webSocket(_ socket: WebSocket, didReceive message: WebSocketMessage)
    /// The connection ended and reconnection number `attempt` starts after `delay` seconds.
    func webSocket(_ socket: WebSocket, willReconnect attempt: Int, after delay: TimeInterval)
    /// The socket ended: closed or failed, exactly once.
    func webSocket(_ socket: WebSocket, didEndWith ending: WebSocketEnding)
}

extension WebSocketDelegate {
    /// Does nothing by default.
    public func webSocket(_ socket: WebSocket, didOpenWith subprotocol: String?) {}
    /// Does nothing by default.
    public func webSocket(_ socket: WebSocket, willReconnect attempt: Int, after delay: TimeInterval) {}
}
