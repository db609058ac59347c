import Foundation

/// Why a server's `101 Switching Protocols` opened no WebSocket (RFC 6455 §4.2.2); carried by
/// `TernError.webSocketHandshakeFailed`. No close frame was sent: the socket never opened. A
/// handshake answered with another status is `TernError.unacceptableStatus` instead.
/// Thread safety: a value type, safe to share.
public enum WebSocketHandshakeFailure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The answer is not a well-formed HTTP/1.1 response head (or its head is over 64 KB).
    case malformedResponse(String)
    /// The answer lacks `Upgrade: websocket` or `Connection: Upgrade`.
    case notUpgraded
    /// `Sec-WebSocket-Accept` does not match the key the client sent.
    case wrongAccept
    /// The server accepted an extension, or extension parameters, the client did not offer.
    case unofferedExtension(String)
    /// The server chose a subprotocol the client did not offer.
    case unofferedSubprotocol(String)

    /// One line for logs.
    public var description: String {
        switch self {
        case .malformedResponse(let detail): "a malformed answer to the upgrade: \(detail)"
        case .notUpgraded: "the answer does not upgrade the connection to websocket"
        case .wrongAccept: "the answer's Sec-WebSocket-Accept does not match the key sent"
        case .unofferedExtension(let value): "the server accepted an extension that was not offered: \(value)"
        case .unofferedSubprotocol(let name): "the server chose a subprotocol that was not offered: \(name)"
        }
    }
}
