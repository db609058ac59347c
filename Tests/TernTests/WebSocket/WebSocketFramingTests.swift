import Foundation
import Testing

@testable import Tern

/// RFC 6455's framing and handshake rules, section by section, on bytes alone (no server): what
/// the reference server can never send is checked here, what it can is checked against it.
@Suite struct WebSocketFramingTests {
    static func read(_ bytes: [UInt8], limit: Int = 1 << 20) throws(WebSocketViolation) -> [WebSocketMessageReader.Incoming] {
        var reader = WebSocketMessageReader(maximumMessageSize: limit, maximumFrameSize: limit)
        var out: [WebSocketMessageReader.Incoming] = []
        // One byte at a time: every frame must survive arriving in pieces.
        for byte in bytes {
            reader.append(Data([byte]))
            while let next = try reader.next() { out.append(next) }
        }
        return out
    }

    static func violation(_ bytes: [UInt8], limit: Int = 1 << 20) -> WebSocketViolation? {
        do {
            _ = try read(bytes, limit: limit)
            return nil
        } catch {
            return error
        }
    }

    // §1.3, §4.2.2: the accept key of the RFC's own example; SHA-1 against FIPS 180's vectors.
    @Test func theAcceptKeyIsTheRFCsExample() {
        #expect(WebSocketHandshake.accept(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(SHA1.digest(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(SHA1.digest([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        let long = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(hex(SHA1.digest(long)) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    }

    // §5.7: "a single-frame masked text message" with the RFC's mask.
    @Test func aClientFrameIsMaskedAsTheRFCShows() {
        let frame = WebSocketFrame(isFinal: true, opcode: .text, payload: Data("Hello".utf8))
        #expect([UInt8](frame.encoded(mask: 0x37FA_213D)) == [0x81, 0x85, 0x37, 0xFA, 0x21, 0x3D, 0x7F, 0x9F, 0x4D, 0x51, 0x58])
        // 126 bytes take the 16-bit length, 65,536 the 64-bit one; the mask bit is always set.
        let medium = [UInt8](WebSocketFrame(isFinal: true, opcode: .binary, payload: Data(count: 126)).encoded(mask: 1))
        #expect(Array(medium[0..<4]) == [0x82, 0xFE, 0x00, 0x7E] && medium.count == 4 + 4 + 126)
        let large = [UInt8](WebSocketFrame(isFinal: false, opcode: .binary, payload: Data(count: 65_536)).encoded(mask: 1))
        #expect(Array(large[0..<10]) == [0x02, 0xFF, 0, 0, 0, 0, 0, 1, 0, 0] && large.count == 10 + 4 + 65_536)
    }

    // §5.3: every payload byte i is XORed with key byte i mod 4, whatever the payload's length and
    // wherever the header leaves it (6, 8 or 14 bytes in).
    @Test(arguments: [0, 1, 3, 7, 8, 9, 15, 16, 17, 125, 126, 133, 65_536, 65_541])
    func everyPayloadByteIsMaskedWithItsKeyByte(size: Int) {
        let payload = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let mask = UInt32.random(in: .min ... .max)
        let bytes = [UInt8](WebSocketFrame(isFinal: true, opcode: .binary, payload: payload).encoded(mask: mask))
        let masked = bytes.suffix(size), key = Array(bytes.dropLast(size).suffix(4))
        #expect(key == [24, 16, 8, 0].map { UInt8(truncatingIfNeeded: mask >> $0) })
        #expect(zip(masked, payload).enumerated().allSatisfy { $0.element.0 ^ key[$0.offset & 3] == $0.element.1 })
    }

    // §5.3: a fresh key per frame, across the refills of the keys read from the system a few
    // kilobytes at a time; and a message over the fragment size goes out as fragments, each
    // with its own key, decoding to the message.
    @Test func everyFrameHasAFreshKeyAndFragmentsReassemble() throws {
        let keys = (0..<5_000).map { _ in WebSocketMaskKeys.next() }
        #expect(Set(keys).count >= 4_995)
        let payload = Data((0..<(WebSocketConnection.fragmentSize * 2 + 5)).map { UInt8(truncatingIfNeeded: $0 % 253) })
        var bytes = [UInt8](WebSocketConnection.frames(.binary, payload))
        #expect(bytes.count == 2 * 14 + 6 + payload.count)
        // Unmasked as a server reads them: the opcodes (binary, continuation, continuation; the
        // last final) and the payload back in one piece.
        var offset = 0
        var unmasked = Data()
        var opcodes: [UInt8] = []
        while offset < bytes.count {
            opcodes.append(bytes[offset])
            let isLong = bytes[offset + 1] & 0x7F == 127
            let length = isLong ? (0..<8).reduce(0) { $0 << 8 | Int(bytes[offset + 2 + $1]) } : Int(bytes[offset + 1] & 0x7F)
            let start = offset + (isLong ? 14 : 6)
            let key = Array(bytes[(start - 4)..<start])
            for index in 0..<length { bytes[start + index] ^= key[index & 3] }
            unmasked.append(contentsOf: bytes[start..<(start + length)])
            offset = start + length
        }
        #expect(opcodes == [0x02, 0x00, 0x80])
        #expect(unmasked == payload)
    }

    // §5.7: the unmasked examples a server sends, in one frame and fragmented, with a ping between.
    @Test func serverFramesAreReadWholeFragmentedAndInterleaved() throws {
        #expect(try Self.read([0x81, 0x05, 0x48, 0x65, 0x6C, 0x6C, 0x6F]) == [.message(.text("Hello"))])
        let fragmented: [UInt8] = [0x01, 0x03, 0x48, 0x65, 0x6C, 0x89, 0x02, 0x68, 0x69, 0x80, 0x02, 0x6C, 0x6F]
        #expect(try Self.read(fragmented) == [.ping(Data("hi".utf8)), .message(.text("Hello"))])
        #expect(try Self.read([0x8A, 0x00]) == [.pong(Data())])
        let binary: [UInt8] = [0x82, 0x7E, 0x01, 0x00] + [UInt8](repeating: 7, count: 256)
        #expect(try Self.read(binary) == [.message(.data(Data(repeating: 7, count: 256)))])
        let big: [UInt8] = [0x82, 0x7F, 0, 0, 0, 0, 0, 1, 0, 0] + [UInt8](repeating: 1, count: 65_536)
        var reader = WebSocketMessageReader(maximumMessageSize: 1 << 20, maximumFrameSize: 1 << 20)
        reader.append(Data(big))
        #expect(try reader.next() == .message(.data(Data(repeating: 1, count: 65_536))))
        // An empty text message, and a message split over empty fragments.
        #expect(try Self.read([0x81, 0x00, 0x01, 0x00, 0x00, 0x00, 0x80, 0x01, 0x41]) == [.message(.text("")), .message(.text("A"))])
    }

    // A large frame's payload is gathered apart as it arrives: whatever the pieces it comes in
    // (one byte, odd sizes, all at once), with a fragmented large message, a ping between
    // fragments and small frames around it, what comes out is the same.
    @Test(arguments: [1, 7_001, 65_536, 1 << 20])
    func largeFramesReadTheSameInAnyPieces(pieceSize: Int) throws {
        func frame(_ first: UInt8, _ payload: [UInt8]) -> [UInt8] {
            let count = payload.count
            let length: [UInt8] =
                count < 126
                ? [UInt8(count)]
                : count <= 0xFFFF
                    ? [126, UInt8(count >> 8), UInt8(count & 0xFF)]
                    : [127] + (0..<8).map { UInt8(truncatingIfNeeded: count >> (56 - $0 * 8)) }
            return [first] + length + payload
        }
        let large = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 % 241) }
        let bytes =
            frame(0x81, Array("a".utf8)) + frame(0x82, large) + frame(0x02, Array(large[..<70_000])) + frame(0x89, [1])
            + frame(0x80, Array(large[70_000...])) + frame(0x81, Array("z".utf8))
        var reader = WebSocketMessageReader(maximumMessageSize: 1 << 20, maximumFrameSize: 1 << 20)
        var out: [WebSocketMessageReader.Incoming] = []
        var start = 0
        while start < bytes.count {
            let end = min(start + pieceSize, bytes.count)
            reader.append(Data(bytes[start..<end]))
            while let next = try reader.next() { out.append(next) }
            start = end
        }
        #expect(out.count == 5)
        #expect(
            out == [
                .message(.text("a")), .message(.data(Data(large))), .ping(Data([1])), .message(.data(Data(large))), .message(.text("z")),
            ])
        #expect(reader.bufferedCount == 0)
    }

    // §5.2: reserved bits, reserved opcodes, masks from the server, control frame rules, lengths.
    @Test func malformedFramesAreProtocolErrors() {
        let cases: [(String, [UInt8])] = [
            ("RSV1", [0xC1, 0x00]), ("RSV2", [0xA1, 0x00]), ("RSV3", [0x91, 0x00]),
            ("opcode 3", [0x83, 0x00]), ("opcode 11", [0x8B, 0x00]),
            ("a masked frame", [0x81, 0x81, 1, 2, 3, 4, 0x41]),
            ("a fragmented ping", [0x09, 0x00]), ("a 126-byte ping", [0x89, 0x7E, 0x00, 0x7E] + [UInt8](repeating: 0, count: 126)),
            ("a 16-bit length under 126", [0x82, 0x7E, 0x00, 0x05, 1, 2, 3, 4, 5]),
            ("a 64-bit length under 65,536", [0x82, 0x7F, 0, 0, 0, 0, 0, 0, 0, 5, 1, 2, 3, 4, 5]),
            ("a 64-bit length with its top bit", [0x82, 0x7F, 0x80, 0, 0, 0, 0, 0, 0, 0]),
            ("a continuation without a message", [0x80, 0x01, 0x41]),
            ("a new message inside one", [0x01, 0x01, 0x41, 0x81, 0x01, 0x42]),
            ("a one-byte close", [0x88, 0x01, 0x03]),
            ("close code 1005", [0x88, 0x02, 0x03, 0xED]), ("close code 999", [0x88, 0x02, 0x03, 0xE7]),
            ("close code 2000", [0x88, 0x02, 0x07, 0xD0]), ("close code 5000", [0x88, 0x02, 0x13, 0x88]),
            // Codes that only describe a closing (1004 reserved, 1006 abnormal, 1015 TLS): never on the wire.
            ("close code 1004", [0x88, 0x02, 0x03, 0xEC]), ("close code 1006", [0x88, 0x02, 0x03, 0xEE]),
            ("close code 1015", [0x88, 0x02, 0x03, 0xF7]),
        ]
        for (name, bytes) in cases {
            #expect(Self.violation(bytes)?.code == .protocolError, "\(name)")
        }
    }

    // §8.1 and §7.4.1: text must be UTF-8 (1007), messages and frames within their limits (1009).
    @Test func invalidTextAndOversizedMessagesAreTheirOwnCloseCodes() throws {
        #expect(Self.violation([0x81, 0x02, 0xC0, 0x80])?.code == .invalidFramePayloadData)  // overlong
        #expect(Self.violation([0x81, 0x03, 0xED, 0xA0, 0x80])?.code == .invalidFramePayloadData)  // a surrogate
        #expect(Self.violation([0x81, 0x04, 0xF4, 0x90, 0x80, 0x80])?.code == .invalidFramePayloadData)  // past U+10FFFF
        #expect(Self.violation([0x88, 0x04, 0x03, 0xE8, 0xFF, 0xFE])?.code == .invalidFramePayloadData)  // a close reason
        // A character split between fragments is fine; the whole message is what must be UTF-8.
        let split: [UInt8] = [0x01, 0x02, 0xCE, 0xBA, 0x00, 0x01, 0xE1, 0x80, 0x02, 0xBD, 0x83]
        #expect(try Self.read(split) == [.message(.text("κὃ"))])
        #expect(Self.violation([0x82, 0x05, 1, 2, 3, 4, 5], limit: 4)?.code == .messageTooBig)
        #expect(Self.violation([0x02, 0x03, 1, 2, 3, 0x80, 0x03, 4, 5, 6], limit: 5)?.code == .messageTooBig)
        #expect(UTF8Validation.isValid(Data("κόσμε 北京 🙂".utf8)))
        #expect(!UTF8Validation.isValid(Data([0xF8, 0x88, 0x80, 0x80, 0x80])))
        #expect(!UTF8Validation.isValid(Data([0xE2, 0x82])))  // cut short
    }

    @Test func closeFramesCarryTheirCodeAndReason() throws {
        #expect(try Self.read([0x88, 0x00]) == [.close(nil, reason: "")])
        #expect(try Self.read([0x88, 0x05, 0x03, 0xE8, 0x62, 0x79, 0x65]) == [.close(.normalClosure, reason: "bye")])
        #expect(try Self.read([0x88, 0x02, 0x0F, 0xA0]) == [.close(WebSocketCloseCode(rawValue: 4000), reason: "")])
    }

    // §4.1: the upgrade request; §4.2.2 and §4.1 (client requirements 5–6): checking the answer.
    @Test func theHandshakeWritesTheUpgradeAndChecksTheAnswer() throws {
        let handshake = WebSocketHandshake(protocols: ["v2", "v1"], key: "dGhlIHNhbXBsZSBub25jZQ==")
        let url = try #require(URL(string: "wss://example.com:8443/live/prices?x=1%202"))
        let head = String(
            decoding: handshake.requestHead(for: url, headers: ["Authorization": "Bearer t", "Upgrade": "h2c"]), as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        #expect(lines.first == "GET /live/prices?x=1%202 HTTP/1.1")
        for line in [
            "Host: example.com:8443", "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Version: 13",
            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Protocol: v2, v1", "Authorization: Bearer t",
        ] {
            #expect(lines.contains(line), "\(line)")
        }
        #expect(!lines.contains("Upgrade: h2c") && head.hasSuffix("\r\n\r\n"))
        var good = ["Upgrade": "WebSocket", "Connection": "keep-alive, Upgrade", "Sec-WebSocket-Accept": "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="]
        #expect(try handshake.check(status: 101, headers: good) == nil)
        good["Sec-WebSocket-Protocol"] = "v1"
        #expect(try handshake.check(status: 101, headers: good) == "v1")
        func refusal(_ status: Int, _ change: (inout [String: String]) -> Void) -> WebSocketHandshake.Refusal? {
            var headers = good
            change(&headers)
            do {
                _ = try handshake.check(status: status, headers: headers)
                return nil
            } catch {
                return error
            }
        }
        #expect(refusal(200) { _ in } == .status(200, headers: good))
        #expect(refusal(101) { $0["Sec-WebSocket-Accept"] = "x" } != nil)
        #expect(refusal(101) { $0["Upgrade"] = nil } != nil)
        #expect(refusal(101) { $0["Connection"] = "close" } != nil)
        #expect(refusal(101) { $0["Sec-WebSocket-Protocol"] = "v3" } != nil)
        #expect(refusal(101) { $0["Sec-WebSocket-Extensions"] = "permessage-deflate" } != nil)
        #expect(WebSocketHandshake(protocols: []).key != WebSocketHandshake(protocols: []).key)
    }

    @Test func aResponseHeadIsReadFromItsBytes() throws {
        let bytes = Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nX: 1\r\nx: 2\r\n\r\n\u{81}".utf8)
        #expect(try RawResponseHead.parse(Array(bytes.prefix(20))) == nil)
        let head = try #require(try RawResponseHead.parse(bytes))
        #expect(head.status == 101 && head.headers["Upgrade"] == "websocket" && head.length == bytes.count - 2)
        #expect(throws: WebSocketHandshake.Refusal.self) { try RawResponseHead.parse(Array("SSH-2.0\r\n\r\n".utf8)) }
        #expect(throws: WebSocketHandshake.Refusal.self) { try RawResponseHead.parse([UInt8](repeating: 65, count: 70_000)) }
    }
}
