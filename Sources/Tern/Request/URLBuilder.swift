import Foundation

/// Turns a request's URL string, the client's base URL and the query parameters into one `URL`.
///
/// Joining: an absolute `http(s)://` URL bypasses the base; a relative path is appended to the
/// base with exactly one `/` between them (`"https://h/v1/"` + `"/users"` → `https://h/v1/users`);
/// a path that starts with `?` only adds a query. Characters a URL cannot hold (spaces, CJK,
/// emoji, a stray `%`) are percent-encoded; existing `%XX` escapes are kept.
enum URLBuilder {
    static func makeURL(
        _ urlString: String,
        baseURL: String?,
        parameters: Parameters,
        encoding: ParameterEncoding
    ) throws(TernError) -> URL {
        var joined = try join(urlString, baseURL: baseURL)
        if !joined.utf8.allSatisfy({ $0 < 0x80 }) { joined = try IDNA.withASCIIHost(joined) }
        let encoded = encodeInvalidCharacters(joined)
        if parameters.isEmpty {
            // The common case needs no query surgery: parse once.
            guard let url = URL(string: encoded), let host = url.host, !host.isEmpty else {
                throw .invalidRequest(.malformedURL(joined))
            }
            if let problem = SettingCheck.portProblem(url) { throw .invalidRequest(.invalidValue(name: "port", reason: problem)) }
            return url
        }
        guard var components = URLComponents(string: encoded),
            let host = components.host, !host.isEmpty
        else { throw .invalidRequest(.malformedURL(joined)) }
        let existing = (components.percentEncodedQuery ?? "")
            .split(separator: "&", omittingEmptySubsequences: true)
            .map(existingPair)
        let merged = (existing + (try encoding.encodedPairs(parameters))).sortedStably(by: \.sortKey)
        components.percentEncodedQuery = merged.map(\.text).joined(separator: "&")
        guard let url = components.url else { throw .invalidRequest(.malformedURL(joined)) }
        if let problem = SettingCheck.portProblem(url) { throw .invalidRequest(.invalidValue(name: "port", reason: problem)) }
        return url
    }

    /// Joins the path onto the base URL, validating the scheme of whichever is absolute.
    static func join(_ urlString: String, baseURL: String?) throws(TernError) -> String {
        let path = urlString.trimmingOuterWhitespace()
        if let scheme = scheme(of: path) {
            try requireHTTP(scheme)
            return path
        }
        if containsSchemeSeparator(path) { throw .invalidRequest(.malformedURL(path)) }
        let base = baseURL?.trimmingOuterWhitespace() ?? ""
        guard !base.isEmpty else {
            throw .invalidRequest(path.isEmpty ? .emptyURL : .missingBaseURL(path: path))
        }
        guard let baseScheme = scheme(of: base) else { throw .invalidRequest(.malformedURL(base)) }
        try requireHTTP(baseScheme)
        if path.isEmpty { return base }
        if path.hasPrefix("?") { return base + path }
        let trimmedBase = base.hasSuffix("/") ? String(base.dropLast()) : base
        let trimmedPath = path.hasPrefix("/") ? String(path.dropFirst()) : path
        return trimmedBase + "/" + trimmedPath
    }

    /// Whether `string` contains `://` (Foundation's `contains` goes through a locale-aware search).
    private static func containsSchemeSeparator(_ string: String) -> Bool {
        var previous: (UInt8, UInt8) = (0, 0)
        for byte in string.utf8 {
            if byte == UInt8(ascii: "/"), previous == (UInt8(ascii: ":"), UInt8(ascii: "/")) { return true }
            previous = (previous.1, byte)
        }
        return false
    }

    /// The scheme of an absolute URL string (`scheme ":"` per RFC 3986), or nil for a relative one.
    private static func scheme(of string: String) -> String? {
        guard let colon = string.firstIndex(of: ":") else { return nil }
        let candidate = string[..<colon]
        guard let first = candidate.unicodeScalars.first, first.isASCIILetter,
            candidate.unicodeScalars.allSatisfy({ $0.isASCIILetter || $0.isASCIIDigit || "+-.".unicodeScalars.contains($0) })
        else { return nil }
        return String(candidate)
    }

    private static func requireHTTP(_ scheme: String) throws(TernError) {
        let lower = scheme.lowercased()
        guard lower == "http" || lower == "https" else { throw .invalidRequest(.unsupportedScheme(scheme)) }
    }

    /// Percent-encodes what may not stand literally in a URL, keeping escapes already there.
    /// `[` and `]` are encoded everywhere but in the host (an IPv6 literal such as `[::1]`): Linux
    /// and macOS 14 / iOS 17 accept them literally in a path or query, but older Apple systems
    /// fail to parse such a URL.
    static func encodeInvalidCharacters(_ string: String) -> String {
        if string.utf8.allSatisfy({ allowedInURL[Int($0)] }) { return string }
        let bytes = Array(string.utf8)
        let host = authorityRange(bytes)
        var result: [UInt8] = []
        result.reserveCapacity(bytes.count + 16)
        for (index, byte) in bytes.enumerated() {
            let isEscape =
                byte == UInt8(ascii: "%") && index + 2 < bytes.count
                && isHexDigit(bytes[index + 1]) && isHexDigit(bytes[index + 2])
            let isHostBracket = (byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]")) && host.contains(index)
            if isEscape || isHostBracket || (byte != UInt8(ascii: "%") && allowedInURL[Int(byte)]) {
                result.append(byte)
            } else {
                appendPercentEscape(byte, to: &result)
            }
        }
        return String(decoding: result, as: UTF8.self)
    }

    /// The byte range of the authority (`user@host:port`) after `scheme://`, empty without one.
    /// `bytes` is indexed from 0 (an array, a whole buffer).
    static func authorityRange<Bytes: RandomAccessCollection<UInt8>>(_ bytes: Bytes) -> Range<Int> where Bytes.Index == Int {
        var index = 0
        while index + 2 < bytes.count,
            !(bytes[index] == UInt8(ascii: ":") && bytes[index + 1] == UInt8(ascii: "/")
                && bytes[index + 2] == UInt8(ascii: "/"))
        {
            index += 1
        }
        guard index + 2 < bytes.count else { return 0..<0 }
        let start = index + 3
        let end = bytes[start...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }
        return start..<(end ?? bytes.count)
    }

    private static let allowedInURL = ByteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#@!$&'()*+,;=")

    private static func existingPair(_ raw: Substring) -> EncodedPair {
        let key = String(raw.prefix { $0 != "=" })
        let decodedKey = key.removingPercentEncoding ?? key
        let sortKey = String(decodedKey.prefix { $0 != "[" })
        return EncodedPair(sortKey: sortKey, text: String(raw))
    }
}

extension Unicode.Scalar {
    var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}

/// A set of bytes as a 256-entry table: a membership test is one load, unlike `CharacterSet`,
/// which costs about a microsecond per character on Linux.
struct ByteSet: Sendable {
    private let members: [Bool]

    init(_ characters: String) {
        var members = [Bool](repeating: false, count: 256)
        for byte in characters.utf8 { members[Int(byte)] = true }
        self.members = members
    }

    subscript(_ byte: Int) -> Bool { members[byte] }
}

func isHexDigit(_ byte: UInt8) -> Bool {
    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte)
        || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(byte)
}

/// Appends `%XX` (upper-case hex) for `byte`.
func appendPercentEscape(_ byte: UInt8, to result: inout [UInt8]) {
    let hex = Array("0123456789ABCDEF".utf8)
    result.append(UInt8(ascii: "%"))
    result.append(hex[Int(byte >> 4)])
    result.append(hex[Int(byte & 0x0F)])
}

extension String {
    /// The string without leading and trailing whitespace; free when there is none.
    func trimmingOuterWhitespace() -> String {
        // Visible ASCII at both ends (nearly every URL) settles it without looking at characters.
        func visibleASCII(_ byte: UInt8?) -> Bool { byte.map { $0 > 0x20 && $0 < 0x7F } ?? true }
        if visibleASCII(utf8.first), visibleASCII(utf8.last) { return self }
        guard first?.isWhitespace == true || last?.isWhitespace == true else { return self }
        return trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

extension Array {
    /// A sort that keeps equal elements in their original order.
    func sortedStably<Key: Comparable>(by key: (Element) -> Key) -> [Element] {
        enumerated()
            .sorted { lhs, rhs in
                let (l, r) = (key(lhs.element), key(rhs.element))
                return l == r ? lhs.offset < rhs.offset : l < r
            }
            .map(\.element)
    }
}
