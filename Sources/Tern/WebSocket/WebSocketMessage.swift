import Foundation

/// A complete WebSocket message: text (valid UTF-8) or binary data.
/// Thread safety: a value type, safe to share.
public enum WebSocketMessage: Sendable, Hashable {
    /// A text message.
    case text(String)
    /// A binary message.
    case data(Data)

    /// The payload's size in bytes (text as UTF-8): what buffers and progress count.
    public var byteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .data(let data): data.count
        }
    }
}

/// A WebSocket close code (RFC 6455 §7.4): why a connection ended.
/// Thread safety: a value type, safe to share.
public struct WebSocketCloseCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    /// The code as sent in a close frame.
    public let rawValue: UInt16

    /// Creates a code; 3000–3999 are registered for libraries and frameworks, 4000–4999 are the
    /// application's own.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// 1000: the purpose of the connection is fulfilled.
    public static let normalClosure = WebSocketCloseCode(rawValue: 1000)
    /// 1001: the endpoint is going away (a server shutting down, a page left).
    public static let goingAway = WebSocketCloseCode(rawValue: 1001)
    /// 1002: the peer broke the protocol.
    public static let protocolError = WebSocketCloseCode(rawValue: 1002)
    /// 1003: a kind of data the endpoint cannot accept (binary for a text-only endpoint, say).
    public static let unsupportedData = WebSocketCloseCode(rawValue: 1003)
    /// 1005: the close frame had no code (never sent; reported when the server sent none).
    public static let noStatusReceived = WebSocketCloseCode(rawValue: 1005)
    /// 1006: the connection ended without a close frame (never sent).
    public static let abnormalClosure = WebSocketCloseCode(rawValue: 1006)
    /// 1007: a text message that is not UTF-8, or data that does not match its type.
    public static let invalidFramePayloadData = WebSocketCloseCode(rawValue: 1007)
    /// 1008: a message that violates the endpoint's policy.
    public static let policyViolation = WebSocketCloseCode(rawValue: 1008)
    /// 1009: a message too big to process.
    public static let messageTooBig = WebSocketCloseCode(rawValue: 1009)
    /// 1010: the client expected an extension the server did not negotiate.
    public static let mandatoryExtensionMissing = WebSocketCloseCode(rawValue: 1010)
    /// 1011: the server met a condition that stopped it from fulfilling the request.
    public static let internalServerError = WebSocketCloseCode(rawValue: 1011)

    /// Whether a close frame may carry this code (RFC 6455 §7.4 and the IANA registry): 1000–1003,
    /// 1007–1014 and 3000–4999. 1005 and 1006 only describe a closing; the rest is reserved.
    public var maySendInCloseFrame: Bool {
        switch rawValue {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    /// `1000 (normal closure)`, or the number alone for a code without a name.
    public var description: String {
        let names: [UInt16: String] = [
            1000: "normal closure", 1001: "going away", 1002: "protocol error", 1003: "unsupported data",
            1005: "no status received", 1006: "abnormal closure", 1007: "invalid frame payload data",
            1008: "policy violation", 1009: "message too big", 1010: "mandatory extension missing",
            1011: "internal server error",
        ]
        return names[rawValue].map { "\(rawValue) (\($0))" } ?? "\(rawValue)"
    }
}
