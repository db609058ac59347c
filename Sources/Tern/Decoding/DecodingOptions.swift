import Foundation

/// How every `Decodable` response is decoded.
package enum ResponseDecoding {
    /// Decodes `type` from `data` with Tern's decoder under `decoder`'s settings, or with
    /// `decoder` itself when it asks for something only it does (JSON5, say).
    package static func decode<T: Decodable>(_ type: T.Type, from data: Data, like decoder: JSONDecoder) throws -> T {
        guard let options = DecodingOptions(decoder) else { return try decoder.decode(T.self, from: data) }
        return try TapeDecoder.decode(T.self, from: data, options: options)
    }
}

/// The settings of a `JSONDecoder` that `TapeDecoder` follows: its date, data, key and
/// non-conforming float strategies and its `userInfo`.
// Sendable: every field is a `let`, read and never changed; the strategies' closures and
// formatters are the ones JSONDecoder itself shares between threads.
struct DecodingOptions: @unchecked Sendable {
    let dates: JSONDecoder.DateDecodingStrategy
    let data: JSONDecoder.DataDecodingStrategy
    let keys: JSONDecoder.KeyDecodingStrategy
    let nonConformingFloats: JSONDecoder.NonConformingFloatDecodingStrategy
    let userInfo: [CodingUserInfoKey: Any]
    /// Whether member names are converted before they are matched (a key strategy other than
    /// the default).
    let convertsKeys: Bool

    /// The settings of `decoder`, or nil when it asks for something only `JSONDecoder` does
    /// (JSON5, a top-level dictionary without braces, a strategy added after this was written).
    init?(_ decoder: JSONDecoder) {
        if #available(macOS 12.0, iOS 15.0, tvOS 15.0, watchOS 8.0, *) {
            if decoder.allowsJSON5 || decoder.assumesTopLevelDictionary { return nil }  // available: the #available above
        }
        switch decoder.keyDecodingStrategy {
        case .useDefaultKeys: convertsKeys = false
        case .convertFromSnakeCase, .custom: convertsKeys = true
        @unknown default: return nil
        }
        dates = decoder.dateDecodingStrategy
        data = decoder.dataDecodingStrategy
        keys = decoder.keyDecodingStrategy
        nonConformingFloats = decoder.nonConformingFloatDecodingStrategy
        userInfo = decoder.userInfo
    }

    /// The name a member written as `name` is matched under, at `path` (with its container's
    /// key path), converted as the key strategy says.
    func convertedName(_ name: String, at path: CodingPathNode) -> String {
        switch keys {
        case .convertFromSnakeCase: return Self.camelCase(fromSnakeCase: name)
        case .custom(let convert): return convert(path.keys + [AnyKey(stringValue: name)]).stringValue
        default: return name
        }
    }

    /// `JSONDecoder`'s snake case conversion: underscores at either end are kept, the words
    /// between them joined with the first lowercased and the others capitalized; a name without
    /// an inner underscore is left as it is.
    static func camelCase(fromSnakeCase name: String) -> String {
        guard !name.isEmpty, let first = name.firstIndex(where: { $0 != "_" }) else { return name }
        var last = name.index(before: name.endIndex)
        while last > first, name[last] == "_" { last = name.index(before: last) }
        let middle = name[first...last]
        let words = middle.split(separator: "_")
        guard words.count > 1 else { return name }
        let joined = ([words[0].lowercased()] + words.dropFirst().map { $0.capitalized }).joined()
        return String(name[..<first]) + joined + String(name[name.index(after: last)...])
    }
}
