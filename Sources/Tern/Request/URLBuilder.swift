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
        let joined = try join(urlString, baseURL: baseURL)
        guard var components = URLComponents(string: encodeInvalidCharacters(joined)),
              let host = components.host, !host.isEmpty
        else { throw .invalidRequest(.malformedURL(joined)) }
        if !parameters.isEmpty {
            let existing = (components.percentEncodedQuery ?? "")
                .split(separator: "&", omittingEmptySubsequences: true)
                .map(existingPair)
            let merged = (existing + (try encoding.encodedPairs(parameters))).sortedStably(by: \.sortKey)
            components.percentEncodedQuery = merged.map(\.text).joined(separator: "&")
        }
        guard let url = components.url else { throw .invalidRequest(.malformedURL(joined)) }
        return url
    }

    /// Joins the path onto the base URL, validating the scheme of whichever is absolute.
    static func join(_ urlString: String, baseURL: String?) throws(TernError) -> String {
        let path = urlString.trimmingCharacters(in: .whitespacesAndNewlines)
        if let scheme = scheme(of: path) {
            try requireHTTP(scheme)
            return path
        }
        if path.contains("://") { throw .invalidRequest(.malformedURL(path)) }
        let base = baseURL?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
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

    /// Percent-encodes what RFC 3986 does not allow anywhere in a URL; keeps valid `%XX` escapes.
    static func encodeInvalidCharacters(_ string: String) -> String {
        let scalars = Array(string.unicodeScalars)
        var result = ""
        result.reserveCapacity(scalars.count)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "%" {
                let isEscape = index + 2 < scalars.count && scalars[index + 1].isHexDigit && scalars[index + 2].isHexDigit
                result += isEscape ? "%" : "%25"
            } else if scalar.isASCII && allowedInURL.contains(scalar) {
                result.unicodeScalars.append(scalar)
            } else {
                for byte in String(scalar).utf8 { result += String(format: "%%%02X", byte) }
            }
            index += 1
        }
        return result
    }

    /// Unreserved, reserved (gen-delims and sub-delims): everything a URL may hold literally.
    private static let allowedInURL = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;="
    )

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
    var isHexDigit: Bool { isASCIIDigit || ("a"..."f").contains(self) || ("A"..."F").contains(self) }
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
