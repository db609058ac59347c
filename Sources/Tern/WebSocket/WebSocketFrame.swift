import Foundation

/// One WebSocket frame (RFC 6455 §5.2): what the reader takes from the server's bytes and the
/// writer turns into a masked client frame.
struct WebSocketFrame: Sendable, Equatable {
    /// The frame's kind.
    enum Opcode: UInt8, Sendable {
        case continuation = 0x0, text = 0x1, binary = 0x2, close = 0x8, ping = 0x9, pong = 0xA

        /// Close, ping and pong: at most 125 bytes, never fragmented, allowed between fragments.
        var isControl: Bool { rawValue & 0x8 != 0 }
    }

    /// Whether this is the last frame of its message.
    var isFinal: Bool
    var opcode: Opcode
    var payload: Data

    /// The bytes of this frame as a client sends it: masked with `mask` (§5.3; a fresh, random
    /// key per frame), its length in the shortest of the three forms.
    func encoded(mask: UInt32) -> Data {
        let count = payload.count
        var bytes = [UInt8]()
        bytes.reserveCapacity(count + 14)
        bytes.append((isFinal ? 0x80 : 0) | opcode.rawValue)
        switch count {
        case 0...125:
            bytes.append(0x80 | UInt8(count))
        case 126...0xFFFF:
            bytes.append(0x80 | 126)
            bytes.append(UInt8(count >> 8))
            bytes.append(UInt8(truncatingIfNeeded: count))
        default:
            bytes.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: UInt64(count) >> UInt64(shift))) }
        }
        let key = [
            UInt8(mask >> 24), UInt8(truncatingIfNeeded: mask >> 16), UInt8(truncatingIfNeeded: mask >> 8), UInt8(truncatingIfNeeded: mask),
        ]
        bytes.append(contentsOf: key)
        let start = bytes.count
        bytes.append(contentsOf: payload)
        bytes.withUnsafeMutableBytes { Self.apply(key, to: UnsafeMutableRawBufferPointer(rebasing: $0[start...])) }
        return Data(bytes)
    }

    /// XORs `payload` with the four `key` bytes repeated: eight bytes at a time (the key twice, in
    /// memory order), then the tail byte by byte — a megabyte is masked in a blink, even unoptimised.
    private static func apply(_ key: [UInt8], to payload: UnsafeMutableRawBufferPointer) {
        guard let base = payload.baseAddress else { return }
        let word = (key + key).withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
        let words = payload.count / 8
        for index in 0..<words {
            let offset = index * 8
            base.storeBytes(of: base.loadUnaligned(fromByteOffset: offset, as: UInt64.self) ^ word, toByteOffset: offset, as: UInt64.self)
        }
        for index in words * 8..<payload.count { payload[index] ^= key[index & 3] }
    }
}

/// How a WebSocket peer broke the protocol, and the close code that says so (RFC 6455 §7.4.1):
/// 1002 for a malformed frame, 1007 for text that is not UTF-8, 1009 for a message over the limit.
struct WebSocketViolation: Error, Sendable, Equatable {
    let code: WebSocketCloseCode
    let reason: String
}

/// Reads the frames a server sends from the bytes as they arrive, checking each against RFC 6455
/// §5: no reserved bits (no extension was negotiated), no reserved opcodes, no mask (a server
/// never masks), control frames final and at most 125 bytes, a length in its shortest form's
/// range, and none over `maximumFrameSize`.
/// Thread safety: a value type, fed from one thread at a time.
struct WebSocketFrameReader: Sendable {
    /// The largest payload a frame may have; a longer one is a 1009 violation.
    let maximumFrameSize: Int
    private var buffer: [UInt8] = []
    private var consumed = 0

    init(maximumFrameSize: Int) {
        self.maximumFrameSize = maximumFrameSize
    }

    /// Bytes received and not yet read as frames.
    var bufferedCount: Int { buffer.count - consumed }

    /// Adds bytes received from the server.
    mutating func append(_ bytes: Data) {
        // Read frames leave the front: at once when nothing is left, in one move past 64 KB.
        if consumed > 0, consumed == buffer.count || consumed >= 1 << 16 {
            buffer.removeFirst(consumed)
            consumed = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, nil until one has fully arrived.
    mutating func next() throws(WebSocketViolation) -> WebSocketFrame? {
        let available = buffer.count - consumed
        guard available >= 2 else { return nil }
        let first = buffer[consumed], second = buffer[consumed + 1]
        guard first & 0x70 == 0 else { throw WebSocketViolation(code: .protocolError, reason: "reserved bits set") }
        guard let opcode = WebSocketFrame.Opcode(rawValue: first & 0x0F) else {
            throw WebSocketViolation(code: .protocolError, reason: "reserved opcode \(first & 0x0F)")
        }
        guard second & 0x80 == 0 else { throw WebSocketViolation(code: .protocolError, reason: "a masked frame from the server") }
        let isFinal = first & 0x80 != 0
        var headerLength = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(buffer[consumed + 2]) << 8 | UInt64(buffer[consumed + 3])
            headerLength = 4
            guard length >= 126 else { throw WebSocketViolation(code: .protocolError, reason: "a length not in its shortest form") }
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = (0..<8).reduce(0) { $0 << 8 | UInt64(buffer[consumed + 2 + $1]) }
            headerLength = 10
            guard length >> 63 == 0 else { throw WebSocketViolation(code: .protocolError, reason: "a 64-bit length with its top bit set") }
            guard length > 0xFFFF else { throw WebSocketViolation(code: .protocolError, reason: "a length not in its shortest form") }
        }
        if opcode.isControl {
            guard isFinal else { throw WebSocketViolation(code: .protocolError, reason: "a fragmented control frame") }
            guard length <= 125 else { throw WebSocketViolation(code: .protocolError, reason: "a control frame over 125 bytes") }
        }
        guard length <= UInt64(maximumFrameSize) else {
            throw WebSocketViolation(code: .messageTooBig, reason: "a frame of \(length) bytes, over the limit of \(maximumFrameSize)")
        }
        let total = headerLength + Int(length)
        guard available >= total else { return nil }
        let payload = Data(buffer[(consumed + headerLength)..<(consumed + total)])
        consumed += total
        return WebSocketFrame(isFinal: isFinal, opcode: opcode, payload: payload)
    }
}
