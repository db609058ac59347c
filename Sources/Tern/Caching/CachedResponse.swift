import Foundation

/// A response as the cache keeps it: the raw response (status, headers, body), never the decoded
/// value, so that serializers run once per delivery on a fresh copy.
struct CachedResponse: Sendable {
    let url: URL
    let status: Int
    let headers: [String: String]
    let body: Data
    let storedAt: Date
    /// The canonical key text, compared on read: a hash collision is a miss.
    let keyText: String

    init(url: URL, status: Int, headers: [String: String], body: Data, storedAt: Date, keyText: String) {
        self.url = url
        self.status = status
        self.headers = headers
        self.body = body
        self.storedAt = storedAt
        self.keyText = keyText
    }

    init(_ response: HTTPURLResponse, body: Data, key: CacheKey, storedAt: Date = Date()) {
        var headers: [String: String] = [:]
        for (name, value) in response.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name] = value }
        }
        self.init(
            url: response.url ?? URL(fileURLWithPath: "/"), status: response.statusCode, headers: headers,
            body: body, storedAt: storedAt, keyText: key.text)
    }

    /// A header, looked up case-insensitively.
    func header(_ name: String) -> String? {
        headers.headerValue(named: name)
    }

    /// Whether the entry is still fresh for `maxAge` seconds (0: forever).
    func isFresh(maxAge: TimeInterval, now: Date = Date()) -> Bool {
        maxAge <= 0 || now.timeIntervalSince(storedAt) < maxAge
    }

    /// Whether the server gave a validator to revalidate the entry with.
    var hasValidator: Bool { header("ETag") != nil || header("Last-Modified") != nil }

    /// The stored response as an `HTTPURLResponse`, for the normal delivery path.
    func httpResponse() -> HTTPURLResponse? {
        HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
    }

    /// The same entry, refreshed by a 304: stored now, with the 304's headers merged over the old.
    func revalidated(by response: HTTPURLResponse) -> CachedResponse {
        var merged = headers
        for (name, value) in response.allHeaderFields {
            guard let name = name as? String, let value = value as? String,
                !["content-length", "content-encoding", "transfer-encoding"].contains(name.lowercased())
            else { continue }
            merged = merged.filter { !ResponseHead.sameName($0.key, name) }
            merged[name] = value
        }
        return CachedResponse(url: url, status: status, headers: merged, body: body, storedAt: Date(), keyText: keyText)
    }

    // MARK: - Disk form

    /// The metadata stored beside the body: a small line format (JSON decoding is slow on Linux).
    /// `tern-cache 1`, status, stored-at milliseconds, URL, base64 key text, then `name: value`
    /// header lines (header values never contain line breaks).
    var metadata: Data {
        var lines = [
            "tern-cache 1", String(status), String(Int64(storedAt.timeIntervalSince1970 * 1000)), url.absoluteString,
            Data(keyText.utf8).base64EncodedString(),
        ]
        lines += headers.map { "\($0.key): \($0.value)" }
        return Data(lines.joined(separator: "\n").utf8)
    }

    init?(body: Data, metadata: Data) {
        let lines = String(decoding: metadata, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.count >= 5, lines[0] == "tern-cache 1", let status = Int(lines[1]), let milliseconds = Int64(lines[2]),
            let url = URL(string: String(lines[3])), let keyData = Data(base64Encoded: String(lines[4]))
        else { return nil }
        var headers: [String: String] = [:]
        for line in lines.dropFirst(5) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[String(line[..<colon])] = String(line[line.index(after: colon)...].dropFirst())
        }
        self.init(
            url: url, status: status, headers: headers, body: body,
            storedAt: Date(timeIntervalSince1970: Double(milliseconds) / 1000), keyText: String(decoding: keyData, as: UTF8.self))
    }
}
