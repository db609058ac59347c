import Foundation

/// What a server sent, message by message: complete messages reassembled from their fragments,
/// and the control frames between them (RFC 6455 §5.4–5.5).
/// Thread safety: a value type, fed from one thread at a time.
struct WebSocketMessageReader: Sendable {
    /// One thing read from the server.
    enum Incoming: Sendable, Equatable {
        case message(WebSocketMessage)
        case ping(Data)
        case pong(Data)
        /// The server's close frame: its code (nil when it sent none) and reason.
        case close(WebSocketCloseCode?, reason: String)
    }

    /// The largest message, all fragments together; a longer one is a 1009 violation.
    let maximumMessageSize: Int
    private var frames: WebSocketFrameReader
    /// The message being reassembled: its kind, the fragments so far, whether it is compressed.
    private var partial: (opcode: WebSocketFrame.Opcode, payload: Data, isCompressed: Bool)?
    /// The agreed permessage-deflate, which inflates compressed messages; nil when none was.
    var deflate: WebSocketDeflate? {
        didSet { frames.allowsCompression = deflate != nil }
    }

    init(maximumMessageSize: Int, maximumFrameSize: Int) {
        self.maximumMessageSize = maximumMessageSize
        frames = WebSocketFrameReader(maximumFrameSize: min(maximumFrameSize, maximumMessageSize))
    }

    /// Bytes received and not yet read (a partial frame), plus a partial message's fragments.
    var bufferedCount: Int { frames.bufferedCount + (partial?.payload.count ?? 0) }

    /// Adds bytes received from the server.
    mutating func append(_ bytes: Data) { frames.append(bytes) }

    /// The next message or control frame, nil until one is complete.
    mutating func next() throws(WebSocketViolation) -> Incoming? {
        while let frame = try frames.next() {
            switch frame.opcode {
            case .ping: return .ping(frame.payload)
            case .pong: return .pong(frame.payload)
            case .close: return try Self.close(frame.payload)
            case .text, .binary:
                guard partial == nil else {
                    throw WebSocketViolation(code: .protocolError, reason: "a new message before the last one's final fragment")
                }
                if frame.isFinal { return try message(frame.opcode, frame.payload, isCompressed: frame.isCompressed) }
                partial = (frame.opcode, frame.payload, frame.isCompressed)
            case .continuation:
                guard var current = partial else {
                    throw WebSocketViolation(code: .protocolError, reason: "a continuation frame outside a message")
                }
                guard current.payload.count + frame.payload.count <= maximumMessageSize else {
                    throw WebSocketViolation(code: .messageTooBig, reason: "a message over the limit of \(maximumMessageSize) bytes")
                }
                current.payload.append(frame.payload)
                partial = frame.isFinal ? nil : current
                if frame.isFinal { return try message(current.opcode, current.payload, isCompressed: current.isCompressed) }
            }
        }
        return nil
    }

    private func message(_ opcode: WebSocketFrame.Opcode, _ received: Data, isCompressed: Bool) throws(WebSocketViolation) -> Incoming {
        let payload = try isCompressed ? deflate?.decompress(received, limit: maximumMessageSize) ?? received : received
        guard opcode == .text else { return .message(.data(payload)) }
        guard let text = UTF8Validation.string(payload) else {
            throw WebSocketViolation(code: .invalidFramePayloadData, reason: "a text message that is not UTF-8")
        }
        return .message(.text(text))
    }

    /// A close frame's payload: nothing, or a code and a UTF-8 reason (§5.5.1).
    private static func close(_ payload: Data) throws(WebSocketViolation) -> Incoming {
        guard !payload.isEmpty else { return .close(nil, reason: "") }
        guard payload.count >= 2 else { throw WebSocketViolation(code: .protocolError, reason: "a close frame of one byte") }
        let bytes = [UInt8](payload)
        let code = WebSocketCloseCode(rawValue: UInt16(bytes[0]) << 8 | UInt16(bytes[1]))
        guard code.maySendInCloseFrame else {
            throw WebSocketViolation(code: .protocolError, reason: "close code \(code.rawValue), which may not be sent")
        }
        guard let reason = UTF8Validation.string(payload.dropFirst(2)) else {
            throw WebSocketViolation(code: .invalidFramePayloadData, reason: "a close reason that is not UTF-8")
        }
        return .close(code, reason: reason)
    }
}

/// Strict UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing past U+10FFFF — what a
/// WebSocket text message must be (RFC 6455 §8.1).
enum UTF8Validation {
    /// The text of `bytes`, or nil when they are not valid UTF-8.
    static func string(_ bytes: Data) -> String? {
        isValid(bytes) ? String(decoding: bytes, as: UTF8.self) : nil
    }

    static func isValid(_ bytes: Data) -> Bool {
        var iterator = bytes.makeIterator()
        while let lead = iterator.next() {
            if lead < 0x80 { continue }
            let (count, minimum): (Int, UInt32)
            switch lead {
            case 0xC2...0xDF: (count, minimum) = (1, 0x80)
            case 0xE0...0xEF: (count, minimum) = (2, 0x800)
            case 0xF0...0xF4: (count, minimum) = (3, 0x10000)
            default: return false
            }
            var scalar = UInt32(lead) & (0x3F >> count)
            for _ in 0..<count {
                guard let next = iterator.next(), next & 0xC0 == 0x80 else { return false }
                scalar = scalar << 6 | UInt32(next & 0x3F)
            }
            if scalar < minimum || scalar > 0x10FFFF || (0xD800...0xDFFF).contains(scalar) { return false }
        }
        return true
    }
}
