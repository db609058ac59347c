import Foundation

/// What a varying response was stored for (RFC 9111 §4.1): the request's values of the headers
/// its `Vary` names, normalised — names lowercased and sorted; values trimmed, list items joined
/// by a bare comma and runs of whitespace made one space, so that `en,  fr` and `en, fr` are one
/// variant; a header the request did not send is absent, which only an absent header matches.
/// Thread safety: a value type, safe to share.
struct CacheVariant: Sendable, Equatable {
    /// One line: `name:value` pairs, joined by `&` (a name alone when absent), with `%`, `&`, `:`
    /// and line breaks percent-escaped.
    let text: String

    init(text: String) { self.text = text }

    /// The variant `requestHeaders` select among a response's that varies on `names`.
    init(names: [String], requestHeaders: [String: String]) {
        func pair(_ name: String) -> String {
            let encodedName = Self.encoded(name)
            guard let value = requestHeaders.headerValue(named: name) else { return encodedName }
            return encodedName + ":" + Self.encoded(Self.normalised(value))
        }
        // Most responses vary on one header: no array, no join.
        text = names.count == 1 ? pair(names[0]) : names.map(pair).joined(separator: "&")
    }

    /// The header names a `Vary` value lists, lowercased, sorted, each once; nil for `*`, which
    /// no request matches.
    static func names(inVary vary: String) -> [String]? {
        let names = vary.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        if names.contains("*") { return nil }
        return Array(Set(names)).sorted()
    }

    private static func normalised(_ value: String) -> String {
        // Most values (one language, a version number) have nothing to normalise.
        if !value.utf8.contains(where: { $0 == 0x2C || $0 == 0x20 || $0 == 0x09 }) { return value }
        return value.split(separator: ",", omittingEmptySubsequences: false)
            .map { $0.split(whereSeparator: \.isWhitespace).joined(separator: " ") }
            .joined(separator: ",")
    }

    /// `text` with the four bytes that would break the line form escaped (`%`, `&`, `:`, a line
    /// break); most values have none and are returned as they are.
    private static func encoded(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x25 || $0 == 0x26 || $0 == 0x3A || $0 == 0x0A || $0 == 0x0D }) else { return text }
        var escaped = ""
        for character in text.unicodeScalars {
            switch character {
            case "%": escaped += "%25"
            case "&": escaped += "%26"
            case ":": escaped += "%3A"
            case "\n": escaped += "%0A"
            case "\r": escaped += "%0D"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }
}

extension CacheKey {
    /// The key of one variant of this key's response: the same endpoint prefix (so that removing
    /// a URL's entries removes its variants), the variant in the compared text.
    func variant(_ variant: CacheVariant) -> CacheKey {
        let text = self.text + "vary " + variant.text + "\n"
        return CacheKey(text: text, stored: stored + "." + String(CacheKey.fnv1a(variant.text), radix: 16))
    }
}
