import Foundation

/// The opening handshake of a WebSocket client (RFC 6455 §4.1–4.2): the upgrade request it writes,
/// and the checks on the server's answer.
/// Thread safety: a value type, safe to share.
struct WebSocketHandshake: Sendable {
    /// Why a server's answer does not open a WebSocket.
    enum Refusal: Error, Sendable, Equatable {
        /// Not `101 Switching Protocols`: the status, headers and body of what it answered instead.
        case status(Int, headers: [String: String])
        /// A 101 that breaks the handshake's rules (a missing upgrade, a wrong accept key, a
        /// subprotocol or extension that was not offered), or an answer that is no HTTP/1.1 head.
        case invalid(WebSocketHandshakeFailure)
    }

    /// The request's `Sec-WebSocket-Key`: 16 random bytes, base64.
    let key: String
    /// The subprotocols offered, in order of preference.
    let protocols: [String]
    /// Whether permessage-deflate is offered (`WebSocketDeflate.offer`).
    let offersDeflate: Bool

    /// A handshake with a fresh key.
    init(protocols: [String], offersDeflate: Bool = false, key: String? = nil) {
        self.protocols = protocols
        self.offersDeflate = offersDeflate
        self.key = key ?? Data((0..<16).map { _ in UInt8.random(in: .min ... .max) }).base64EncodedString()
    }

    /// The `Sec-WebSocket-Accept` a server must answer `key` with: base64 of the SHA-1 of the key
    /// and the protocol's GUID.
    static func accept(for key: String) -> String {
        Data(SHA1.digest(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
    }

    /// The upgrade request for `url` with the request's own `headers` (never ones the handshake
    /// itself sets), as the bytes to write: `GET` with the path and query, `Host`, the upgrade
    /// headers, the key, version 13 and the subprotocols offered.
    func requestHead(for url: URL, headers: [String: String]) -> Data {
        var target = url.path.isEmpty ? "/" : url.path
        if let components = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
            if let query = components.percentEncodedQuery { target += "?" + query }
        }
        let scheme = url.scheme?.lowercased()
        let defaultPort = scheme == "wss" || scheme == "https" ? 443 : 80
        var host = url.host ?? ""
        if host.contains(":") { host = "[\(host)]" }  // an IPv6 literal
        if let port = url.port, port != defaultPort { host += ":\(port)" }
        var lines = [
            "GET \(target) HTTP/1.1", "Host: \(host)", "Upgrade: websocket", "Connection: Upgrade",
            "Sec-WebSocket-Key: \(key)", "Sec-WebSocket-Version: 13",
        ]
        if !protocols.isEmpty { lines.append("Sec-WebSocket-Protocol: \(protocols.joined(separator: ", "))") }
        if offersDeflate { lines.append("Sec-WebSocket-Extensions: \(WebSocketDeflate.offer)") }
        let owned: Set<String> = [
            "host", "upgrade", "connection", "sec-websocket-key", "sec-websocket-version", "sec-websocket-protocol",
            "sec-websocket-extensions", "content-length", "transfer-encoding",
        ]
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) where !owned.contains(name.lowercased()) {
            lines.append("\(name): \(value)")
        }
        return Data((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// Checks the server's answer, `status` with `headers` (names in any case): the subprotocol it
    /// chose (nil for none), or why the answer opens no WebSocket. The only extension that may be
    /// accepted is permessage-deflate, when offered (`agreedDeflate`).
    func check(status: Int, headers: [String: String]) throws(Refusal) -> String? {
        guard status == 101 else { throw .status(status, headers: headers) }
        var fields: [String: String] = [:]
        for (name, value) in headers { fields[name.lowercased()] = value.trimmingCharacters(in: .whitespaces) }
        guard fields["upgrade"]?.lowercased() == "websocket" else { throw .invalid(.notUpgraded) }
        guard let connection = fields["connection"],
            connection.lowercased().split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == "upgrade" })
        else { throw .invalid(.notUpgraded) }
        guard fields["sec-websocket-accept"] == Self.accept(for: key) else { throw .invalid(.wrongAccept) }
        if let extensions = fields["sec-websocket-extensions"], !extensions.isEmpty {
            guard offersDeflate else { throw .invalid(.unofferedExtension(extensions)) }
            do { _ = try WebSocketDeflate.parameters(from: extensions) } catch { throw .invalid(error) }
        }
        guard let chosen = fields["sec-websocket-protocol"], !chosen.isEmpty else { return nil }
        guard protocols.contains(chosen) else { throw .invalid(.unofferedSubprotocol(chosen)) }
        return chosen
    }
}

extension WebSocketHandshake {
    /// The permessage-deflate parameters a checked answer's `headers` agreed to; nil for none.
    static func agreedDeflate(_ headers: [String: String]) -> WebSocketDeflate.Parameters? {
        guard let answer = headers.first(where: { $0.key.lowercased() == "sec-websocket-extensions" })?.value, !answer.isEmpty else {
            return nil
        }
        return try? WebSocketDeflate.parameters(from: answer)
    }
}

/// The head of an HTTP/1.1 response read from raw bytes, as a WebSocket handshake receives it.
struct RawResponseHead: Sendable, Equatable {
    let status: Int
    let headers: [String: String]
    /// How many bytes the head took, its blank line included: what follows is the body, or frames.
    let length: Int

    /// The head at the start of `bytes`; nil while it is incomplete; throws on a malformed one.
    static func parse(_ bytes: [UInt8], limit: Int = 64 << 10) throws(WebSocketHandshake.Refusal) -> RawResponseHead? {
        guard let end = headEnd(bytes) else {
            if bytes.count > limit { throw .invalid(.malformedResponse("a response head over \(limit) bytes")) }
            return nil
        }
        let text = String(decoding: bytes[0..<end], as: UTF8.self)
        var lines = text.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst().split(separator: " ", maxSplits: 2)
        guard statusLine.count >= 2, statusLine[0].hasPrefix("HTTP/1."), let status = Int(statusLine[1]), (100...599).contains(status)
        else { throw .invalid(.malformedResponse("not an HTTP/1.1 response")) }
        var headers: [String: String] = [:]
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw .invalid(.malformedResponse("a malformed header line")) }
            let name = String(line[..<colon]).trimmingCharacters(in: .whitespaces)
            let value = String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        return RawResponseHead(status: status, headers: headers, length: end + 4)
    }

    /// Where the blank line that ends the head starts, if it has arrived.
    private static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4)
        where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index
        }
        return nil
    }
}
