import Foundation

/// permessage-deflate (RFC 7692) for one connection: the offer, the server's answer read as
/// parameters, and the two streams that compress what Tern sends and inflate what it receives.
/// Thread safety: used only on its connection's queue.
final class WebSocketDeflate: Sendable {
    /// What Tern offers: any window the server wants the client to use (`client_max_window_bits`
    /// without a value), and the server's choice of everything else.
    static let offer = "permessage-deflate; client_max_window_bits"

    /// What the server agreed to (RFC 7692 §7.1).
    struct Parameters: Sendable, Equatable {
        var serverNoContextTakeover = false
        var clientNoContextTakeover = false
        var serverMaxWindowBits = 15
        var clientMaxWindowBits = 15
    }

    let parameters: Parameters
    private let compressor: ZLibCodec
    private let decompressor: ZLibCodec
    /// The empty stored block a flush ends with: left off a message sent, put back on one received.
    private static let tail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    init(_ parameters: Parameters) throws(TernError) {
        let zlib = try ZLib.loaded.get()
        self.parameters = parameters
        // zlib's raw deflate has no 256-byte window: asked for one, Tern sends stored blocks, which
        // refer to no window at all. Inflating with the largest window reads any server's.
        let bits = parameters.clientMaxWindowBits
        compressor = try ZLibCodec(zlib, deflating: true, windowBits: -Int32(max(bits, 9)), level: bits == 8 ? 0 : 6)
        decompressor = try ZLibCodec(zlib, deflating: false, windowBits: -15)
    }

    /// The server's `Sec-WebSocket-Extensions` answer to the offer, read; throws for anything
    /// not offered: another extension, a parameter twice, an unknown one, a window outside 8–15.
    static func parameters(from answer: String) throws(WebSocketHandshakeFailure) -> Parameters {
        let refused = WebSocketHandshakeFailure.unofferedExtension(answer)
        let extensions = answer.split(separator: ",")
        guard extensions.count == 1 else { throw refused }
        var items = extensions[0].split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard items.removeFirst().lowercased() == "permessage-deflate" else { throw refused }
        var parameters = Parameters()
        var seen: Set<String> = []
        for item in items {
            let pair = item.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            let name = pair[0].lowercased()
            let bits = pair.count == 2 ? Int(pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))) : nil
            guard seen.insert(name).inserted, pair.count == 1 || bits.map({ (8...15).contains($0) }) == true else { throw refused }
            switch (name, bits) {
            case ("server_no_context_takeover", nil): parameters.serverNoContextTakeover = true
            case ("client_no_context_takeover", nil): parameters.clientNoContextTakeover = true
            case ("server_max_window_bits", let bits?): parameters.serverMaxWindowBits = bits
            case ("client_max_window_bits", let bits?): parameters.clientMaxWindowBits = bits
            default: throw refused
            }
        }
        return parameters
    }

    /// A message's payload as it is sent: deflated, flushed, without the flush's tail (§7.2.1).
    func compress(_ payload: Data) -> Data {
        var output = compressor.deflate(payload)
        if output.suffix(4).elementsEqual(Self.tail) { output.removeLast(4) }
        if parameters.clientNoContextTakeover { compressor.reset() }
        return output
    }

    /// A compressed message's payload inflated (§7.2.2); a violation when it would inflate past
    /// `limit` bytes (1009, checked as it inflates: a bomb never grows memory past the limit) or
    /// is not deflate data (1007).
    func decompress(_ payload: Data, limit: Int) throws(WebSocketViolation) -> Data {
        var input = payload
        input.append(contentsOf: Self.tail)
        let output: Data
        do {
            output = try decompressor.inflate(input, limit: limit)
        } catch {
            switch error {
            case .tooLarge:
                throw WebSocketViolation(
                    code: .messageTooBig, reason: "a compressed message that inflates past the limit of \(limit) bytes")
            case .invalid(let detail):
                throw WebSocketViolation(code: .invalidFramePayloadData, reason: "a compressed message that does not inflate: \(detail)")
            }
        }
        if parameters.serverNoContextTakeover { decompressor.reset() }
        return output
    }
}
