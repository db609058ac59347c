import Foundation

extension WebSocketConnection {
    /// `message` as the frames that carry it, compressed with `deflate` when given.
    static func frames(_ message: WebSocketMessage, deflate: WebSocketDeflate? = nil) -> Data {
        let (opcode, payload): (WebSocketFrame.Opcode, Data)
        switch message {
        case .text(let text): (opcode, payload) = (.text, Data(text.utf8))
        case .data(let data): (opcode, payload) = (.binary, data)
        }
        guard let deflate else { return frames(opcode, payload) }
        return frames(opcode, deflate.compress(payload), compressed: true)
    }

    /// `payload` as frames of at most `fragmentSize` bytes, each with its own mask; the first with
    /// RSV1 when `compressed`.
    static func frames(_ opcode: WebSocketFrame.Opcode, _ payload: Data, compressed: Bool = false) -> Data {
        var fragments: [(isFinal: Bool, opcode: WebSocketFrame.Opcode, payload: Data.SubSequence)] = []
        var start = payload.startIndex
        repeat {
            let end = min(start + fragmentSize, payload.endIndex)
            fragments.append((end == payload.endIndex, start == payload.startIndex ? opcode : .continuation, payload[start..<end]))
            start = end
        } while start < payload.endIndex
        return WebSocketFrame.encode(fragments, compressed: compressed, masks: WebSocketMaskKeys.next)
    }

    /// A close frame's payload: the code, then at most 123 bytes of reason, cut at a character
    /// boundary.
    static func closePayload(_ code: WebSocketCloseCode, _ reason: String) -> Data {
        var payload = Data([UInt8(code.rawValue >> 8), UInt8(truncatingIfNeeded: code.rawValue)])
        var text = Substring(reason)
        while text.utf8.count > 123 { text = text.dropLast() }
        payload.append(contentsOf: text.utf8)
        return payload
    }
}
