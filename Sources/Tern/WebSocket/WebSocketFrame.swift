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
    /// RSV1 on a message's first frame: its payload is deflated (permessage-deflate).
    var isCompressed = false

    /// The bytes of this frame as a client sends it: masked with `mask` (§5.3; a fresh, random
    /// key per frame), its length in the shortest of the three forms.
    func encoded(mask: UInt32) -> Data {
        Self.encode([(isFinal, opcode, payload[...])], masks: { mask })
    }

    /// `fragments` as the frames a client sends, one after another in one allocation: each masked
    /// with a key from `masks` while its payload is copied in (one pass over the bytes).
    /// With `compressed`, the first frame carries RSV1 (permessage-deflate, RFC 7692 §6).
    static func encode(
        _ fragments: [(isFinal: Bool, opcode: Opcode, payload: Data.SubSequence)], compressed: Bool = false, masks: () -> UInt32
    ) -> Data {
        let total = fragments.reduce(0) { $0 + headerSize(forPayload: $1.payload.count) + $1.payload.count }
        // Out of memory traps here as every Swift allocation does.
        guard let base = malloc(total) else { preconditionFailure("no memory for a WebSocket frame of \(total) bytes") }
        var offset = 0
        for fragment in fragments {
            let count = fragment.payload.count
            let mask = masks()
            let rsv1: UInt8 = compressed && offset == 0 ? 0x40 : 0
            base.storeBytes(of: (fragment.isFinal ? 0x80 : 0) | rsv1 | fragment.opcode.rawValue, toByteOffset: offset, as: UInt8.self)
            offset += 1
            // The length: in the second byte, or 126 / 127 there and 2 / 8 bytes after it.
            let (marker, lengthBytes): (UInt8, Int) = count <= 125 ? (UInt8(count), 0) : count <= 0xFFFF ? (126, 2) : (127, 8)
            base.storeBytes(of: 0x80 | marker, toByteOffset: offset, as: UInt8.self)
            offset += 1
            for index in 0..<lengthBytes {
                let shift = UInt64((lengthBytes - 1 - index) * 8)
                base.storeBytes(of: UInt8(truncatingIfNeeded: UInt64(count) >> shift), toByteOffset: offset + index, as: UInt8.self)
            }
            offset += lengthBytes
            // The key in network order, then the payload XOR the key repeated.
            base.storeBytes(of: mask.bigEndian, toByteOffset: offset, as: UInt32.self)
            offset += 4
            fragment.payload.withUnsafeBytes { source in
                maskedCopy(source, to: UnsafeMutableRawBufferPointer(start: base + offset, count: count), key: mask)
            }
            offset += count
        }
        return Data(bytesNoCopy: base, count: total, deallocator: .free)
    }

    /// The bytes a frame's header takes before a payload of `count` bytes: the first two, the
    /// extended length, and the key.
    static func headerSize(forPayload count: Int) -> Int {
        switch count {
        case 0...125: 6
        case 126...0xFFFF: 8
        default: 14
        }
    }

    /// `source` XOR the key (in network order, repeated) into `target`: eight bytes at a time,
    /// then the tail byte by byte — a megabyte is masked in a blink, even unoptimised.
    private static func maskedCopy(_ source: UnsafeRawBufferPointer, to target: UnsafeMutableRawBufferPointer, key: UInt32) {
        guard let from = source.baseAddress, let to = target.baseAddress else { return }
        let key = key.bigEndian
        // The key twice, in memory order.
        let word = UInt64(key) | UInt64(key) << 32
        let words = source.count / 8
        for index in 0..<words {
            let offset = index * 8
            to.storeBytes(of: from.loadUnaligned(fromByteOffset: offset, as: UInt64.self) ^ word, toByteOffset: offset, as: UInt64.self)
        }
        for index in words * 8..<source.count { target[index] = source[index] ^ withUnsafeBytes(of: key) { $0[index & 3] } }
    }
}

/// Fresh masking keys for the frames a client sends (RFC 6455 §5.3: unpredictable, from a strong
/// source of entropy): the operating system's random generator, read a few kilobytes at a time
/// on Linux, where each of its calls is a system call.
/// Thread safety: safe to use from any thread (one lock).
enum WebSocketMaskKeys {
    private static let keys = Locked((buffer: [UInt32](), next: 0))

    /// A key no frame has used.
    static func next() -> UInt32 {
        keys.withLock { keys in
            if keys.next == keys.buffer.count {
                keys.buffer = fresh()
                keys.next = 0
            }
            defer { keys.next += 1 }
            return keys.buffer[keys.next]
        }
    }

    private static func fresh() -> [UInt32] {
        #if os(Linux) || os(Android)
        if let handle = FileHandle(forReadingAtPath: "/dev/urandom") {
            let bytes = handle.readData(ofLength: 4_096)
            handle.closeFile()
            if bytes.count == 4_096 {
                return bytes.withUnsafeBytes { raw in (0..<1_024).map { raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self) } }
            }
        }
        #endif
        // Apple's generator does not enter the kernel for each call.
        var generator = SystemRandomNumberGenerator()
        return (0..<64).map { _ in UInt32.random(in: .min ... .max, using: &generator) }
    }
}

/// How a WebSocket peer broke the protocol, and the close code that says so (RFC 6455 §7.4.1):
/// 1002 for a malformed frame, 1007 for text that is not UTF-8, 1009 for a message over the limit.
struct WebSocketViolation: Error, Sendable, Equatable {
    let code: WebSocketCloseCode
    let reason: String
}

/// Reads the frames a server sends from the bytes as they arrive, checking each against RFC 6455
/// §5: no reserved bits (but RSV1 on a message's first frame once permessage-deflate is agreed),
/// no reserved opcodes, no mask (a server
/// never masks), control frames final and at most 125 bytes, a length in its shortest form's
/// range, and none over `maximumFrameSize`.
/// Thread safety: a value type, fed from one thread at a time.
struct WebSocketFrameReader: Sendable {
    /// The largest payload a frame may have; a longer one is a 1009 violation.
    let maximumFrameSize: Int
    /// Whether RSV1 may mark a compressed message (permessage-deflate was agreed).
    var allowsCompression = false
    private var buffer: [UInt8] = []
    private var consumed = 0
    /// A large frame whose header has been read: its payload is collected here as it arrives,
    /// straight into the buffer it is handed over in, not through `buffer`.
    private var collecting: (isFinal: Bool, opcode: WebSocketFrame.Opcode, payload: Data, length: Int, isCompressed: Bool)?
    /// Frames at least this large are collected in their own buffer.
    static let collectedFrameSize = 1 << 16

    init(maximumFrameSize: Int) {
        self.maximumFrameSize = maximumFrameSize
    }

    /// Bytes received and not yet read as frames.
    var bufferedCount: Int { buffer.count - consumed + (collecting?.payload.count ?? 0) }

    /// Adds bytes received from the server.
    mutating func append(_ bytes: Data) {
        var bytes = bytes[...]
        if var frame = collecting, frame.payload.count < frame.length {
            // Out of `collecting` while it grows, so that its payload is not copied on write.
            collecting = nil
            let taken = bytes.prefix(frame.length - frame.payload.count)
            frame.payload.append(contentsOf: taken)
            collecting = frame
            bytes = bytes.dropFirst(taken.count)
            if bytes.isEmpty { return }
        }
        // Read frames leave the front: at once when nothing is left, in one move past 64 KB.
        if consumed > 0, consumed == buffer.count || consumed >= 1 << 16 {
            buffer.removeFirst(consumed)
            consumed = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame, nil until one has fully arrived.
    mutating func next() throws(WebSocketViolation) -> WebSocketFrame? {
        if let frame = collecting {
            guard frame.payload.count == frame.length else { return nil }
            collecting = nil
            return WebSocketFrame(isFinal: frame.isFinal, opcode: frame.opcode, payload: frame.payload, isCompressed: frame.isCompressed)
        }
        let available = buffer.count - consumed
        guard available >= 2 else { return nil }
        let first = buffer[consumed], second = buffer[consumed + 1]
        let isCompressed = first & 0x70 == 0x40 && allowsCompression
        guard first & 0x70 == 0 || isCompressed else { throw WebSocketViolation(code: .protocolError, reason: "reserved bits set") }
        guard let opcode = WebSocketFrame.Opcode(rawValue: first & 0x0F) else {
            throw WebSocketViolation(code: .protocolError, reason: "reserved opcode \(first & 0x0F)")
        }
        if isCompressed, opcode.isControl || opcode == .continuation {
            throw WebSocketViolation(code: .protocolError, reason: "RSV1 on a control or continuation frame")
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
        guard available >= total else {
            if length >= Self.collectedFrameSize {
                var payload = Data(capacity: Int(length))
                payload.append(contentsOf: buffer[(consumed + headerLength)...])
                consumed = buffer.count
                collecting = (isFinal, opcode, payload, Int(length), isCompressed)
            }
            return nil
        }
        let payload = Data(buffer[(consumed + headerLength)..<(consumed + total)])
        consumed += total
        return WebSocketFrame(isFinal: isFinal, opcode: opcode, payload: payload, isCompressed: isCompressed)
    }
}
