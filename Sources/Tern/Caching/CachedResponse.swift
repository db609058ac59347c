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
    /// For a response that varies (`Vary`), the request's values of the headers it varies on,
    /// as `CacheVariant` normalises them; nil for one that does not.
    let variant: CacheVariant?
    /// The response's `Vary`, looked up once (every read asks).
    let vary: String?
    /// The header names of a variant index (parsed once); nil for a response.
    let variantNames: [String]?
    /// What its headers say about its freshness (read once: a hit only does arithmetic).
    let freshness: ServerFreshness

    /// An entry stored at `storedAt`, when it arrived after an exchange of `exchangeDuration`
    /// seconds; `initialAge`: its age on arrival, when already worked out (read back from disk).
    init(
        url: URL, status: Int, headers: [String: String], body: Data, storedAt: Date, keyText: String, variant: CacheVariant? = nil,
        exchangeDuration: TimeInterval = 0, initialAge: TimeInterval? = nil
    ) {
        self.freshness = ServerFreshness(
            headers: headers, url: url, status: status, received: storedAt, exchangeDuration: exchangeDuration, initialAge: initialAge)
        self.vary = headers.headerValue(named: "Vary")
        self.variantNames = status == 0 ? CacheVariant.names(inVary: vary ?? "") : nil
        self.url = url
        self.status = status
        self.headers = headers
        self.body = body
        self.storedAt = storedAt
        self.keyText = keyText
        self.variant = variant
    }

    init(
        _ response: HTTPURLResponse, body: Data, key: CacheKey, storedAt: Date = Date(), variant: CacheVariant? = nil,
        exchangeDuration: TimeInterval = 0
    ) {
        self.init(ResponseHead(response), body: body, key: key, storedAt: storedAt, variant: variant, exchangeDuration: exchangeDuration)
    }

    /// An entry for a response's `head` (read from its parts: no `HTTPURLResponse` is built).
    init(
        _ head: ResponseHead, body: Data, key: CacheKey, storedAt: Date = Date(), variant: CacheVariant? = nil,
        exchangeDuration: TimeInterval = 0
    ) {
        self.init(
            url: head.url ?? URL(fileURLWithPath: "/"), status: head.statusCode, headers: head.headerFields,
            body: body, storedAt: storedAt, keyText: key.text, variant: variant, exchangeDuration: exchangeDuration)
    }

    /// The entry kept at a varying response's key: not a response, but the names of the headers
    /// its variants are stored by.
    static func variantIndex(varyingOn names: [String], key: CacheKey, url: URL) -> CachedResponse {
        CachedResponse(
            url: url, status: 0, headers: ["Vary": names.joined(separator: ", ")], body: Data(), storedAt: Date(), keyText: key.text)
    }

    /// Whether this response may answer a request with `requestHeaders`: one that does not vary
    /// always; one that varies when the request's values are the ones it was stored for (an entry
    /// stored with a `Vary` but without those values, by an older version, never).
    func matches(_ requestHeaders: [String: String]) -> Bool {
        guard let vary else { return true }
        guard let variant, let names = CacheVariant.names(inVary: vary) else { return false }
        return variant == CacheVariant(names: names, requestHeaders: requestHeaders)
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

    /// The same entry, refreshed by a 304 that took `exchangeDuration` seconds: stored now, with
    /// the 304's headers merged over the old (RFC 9111 §3.2), its freshness read from the result.
    func revalidated(by response: ResponseHead, exchangeDuration: TimeInterval = 0) -> CachedResponse {
        // The entry's age starts again from the 304's own `Age` (none: it came fresh from the
        // server), never from the one the first response arrived with.
        var merged = headers.filter { !ResponseHead.sameName($0.key, "Age") }
        for (name, value) in response.headerFields
        where !["content-length", "content-encoding", "transfer-encoding"].contains(name.lowercased()) {
            merged = merged.filter { !ResponseHead.sameName($0.key, name) }
            merged[name] = value
        }
        return CachedResponse(
            url: url, status: status, headers: merged, body: body, storedAt: Date(), keyText: keyText, variant: variant,
            exchangeDuration: exchangeDuration)
    }

    // MARK: - Disk form

    /// The metadata stored beside the body: a small line format (JSON decoding is slow on Linux).
    /// `tern-cache 3`, status, stored-at milliseconds, URL, base64 key text, the variant (`-` for
    /// none), the age on arrival in milliseconds, then `name: value` header lines (header values
    /// never contain line breaks). Version 2 (no age line) and 1 (no variant line either) are still read.
    var metadata: Data {
        var lines = [
            "tern-cache 3", String(status), String(Int64(storedAt.timeIntervalSince1970 * 1000)), url.absoluteString,
            Data(keyText.utf8).base64EncodedString(), variant?.text ?? "-", String(Int64(freshness.initialAge * 1000)),
        ]
        lines += headers.map { "\($0.key): \($0.value)" }
        return Data(lines.joined(separator: "\n").utf8)
    }

    init?(body: Data, metadata: Data) {
        let lines = String(decoding: metadata, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
        let version = lines.first.flatMap { $0.hasPrefix("tern-cache ") ? Int($0.dropFirst(11)) : nil } ?? 0
        guard (1...3).contains(version), lines.count >= 4 + version, let status = Int(lines[1]),
            let milliseconds = Int64(lines[2]), let url = URL(string: String(lines[3])),
            let keyData = Data(base64Encoded: String(lines[4]))
        else { return nil }
        let variant = version >= 2 && lines[5] != "-" ? CacheVariant(text: String(lines[5])) : nil
        let initialAge = version >= 3 ? Int64(lines[6]).map { TimeInterval($0) / 1000 } : nil
        var headers: [String: String] = [:]
        for line in lines.dropFirst(4 + version) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[String(line[..<colon])] = String(line[line.index(after: colon)...].dropFirst())
        }
        self.init(
            url: url, status: status, headers: headers, body: body,
            storedAt: Date(timeIntervalSince1970: Double(milliseconds) / 1000), keyText: String(decoding: keyData, as: UTF8.self),
            variant: variant, initialAge: initialAge)
    }
}
