import Foundation

/// Request parameters: string keys and values of the kinds `ParameterEncoding` documents.
///
/// Written as dictionary literals, like AFNetworking's `NSDictionary` parameters:
/// `["q": "北京", "page": 2, "tags": ["a", "b"], "filter": ["min": 1], "debug": true]`.
/// Thread safety: a value type of `Sendable` values, safe to share.
public typealias Parameters = [String: any Sendable]

/// How parameter values become `key=value` pairs in a query string or a form body.
///
/// The conventions, all percent-encoded per RFC 3986 (only `A–Z a–z 0–9 - . _ ~` stay literal,
/// so `+ & = # ? / space`, CJK and emoji in keys and values always round-trip):
/// - strings, integers, floating-point numbers, `Decimal`, `UUID` and `URL` are written as text;
/// - `Bool` is `true` / `false` (or `1` / `0` with `bools = .numeric`);
/// - arrays follow `arrays` (`tags[]=a&tags[]=b` by default, as AFNetworking does);
/// - nested dictionaries become `filter[min]=1`, their keys sorted;
/// - `nil` (an `Optional` with no value) drops the key; `NSNull()` sends the key with an empty value;
/// - top-level keys are sorted (stable, so array elements keep their order), and pairs already in
///   the URL's query are kept as written and sorted in among them;
/// - anything else fails the request with `TernError.invalidRequest(.unencodableValue)`.
///
/// Thread safety: a value type, safe to share.
public struct ParameterEncoding: Sendable, Equatable {
    /// How arrays are written.
    public enum ArrayStyle: Sendable, Equatable {
        /// `tags[]=a&tags[]=b` (AFNetworking, PHP, Rails). The default.
        case brackets
        /// `tags=a&tags=b` (many Go / Java servers).
        case repeatedKey
        /// `tags[0]=a&tags[1]=b`.
        case indexed
    }

    /// How booleans are written.
    public enum BoolStyle: Sendable, Equatable {
        /// `true` / `false`. The default.
        case literal
        /// `1` / `0`.
        case numeric
    }

    /// How arrays are written; `.brackets` by default.
    public var arrays: ArrayStyle
    /// How booleans are written; `.literal` by default.
    public var bools: BoolStyle

    /// Creates an encoding; the defaults are `.brackets` and `.literal`.
    public init(arrays: ArrayStyle = .brackets, bools: BoolStyle = .literal) {
        self.arrays = arrays
        self.bools = bools
    }

    /// Brackets for arrays, `true` / `false` for booleans.
    public static let `default` = ParameterEncoding()
}

extension ParameterEncoding {
    /// Encodes `parameters` into a percent-encoded `a=1&b=2` string, keys sorted.
    /// - Throws: `TernError.invalidRequest(.unencodableValue)` naming the key of a value that has
    ///   no encoding.
    public func encode(_ parameters: Parameters) throws(TernError) -> String {
        let pairs = try encodedPairs(parameters)
        return pairs.map(\.text).joined(separator: "&")
    }

    /// The percent-encoded pairs with the top-level key each came from, sorted by that key.
    func encodedPairs(_ parameters: Parameters) throws(TernError) -> [EncodedPair] {
        var pairs: [EncodedPair] = []
        for key in parameters.keys.sorted() {
            var flat: [(String, String)] = []
            try flatten(key: key, value: parameters[key]!, into: &flat)
            for (name, value) in flat {
                pairs.append(EncodedPair(sortKey: key, text: Self.percentEncode(name) + "=" + Self.percentEncode(value)))
            }
        }
        return pairs
    }

    private func flatten(key: String, value: Any, into pairs: inout [(String, String)]) throws(TernError) {
        if let optional = value as? any OptionalParameter {
            guard let wrapped = optional.wrappedParameter else { return }
            try flatten(key: key, value: wrapped, into: &pairs)
            return
        }
        if value is NSNull {
            pairs.append((key, ""))
            return
        }
        if let scalar = scalarText(value) {
            pairs.append((key, scalar))
            return
        }
        if let dictionary = value as? [String: Any] {
            for nestedKey in dictionary.keys.sorted() {
                try flatten(key: "\(key)[\(nestedKey)]", value: dictionary[nestedKey]!, into: &pairs)
            }
            return
        }
        if let array = value as? [Any] {
            for (index, element) in array.enumerated() {
                let elementKey: String =
                    switch arrays {
                    case .brackets: "\(key)[]"
                    case .repeatedKey: key
                    case .indexed: "\(key)[\(index)]"
                    }
                try flatten(key: elementKey, value: element, into: &pairs)
            }
            return
        }
        throw .invalidRequest(.unencodableValue(key: key, reason: "\(type(of: value)) has no query encoding"))
    }

    private func scalarText(_ value: Any) -> String? {
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            return NSNumber.isBoolean(number) ? boolText(number.boolValue) : number.stringValue
        }
        switch value {
        case let bool as Bool: return boolText(bool)
        case let string as String: return string
        case let substring as Substring: return String(substring)
        case let character as Character: return String(character)
        case let number as any BinaryInteger: return "\(number)"
        case let number as Double: return number.isFinite ? "\(number)" : nil
        case let number as Float: return number.isFinite ? "\(number)" : nil
        case let decimal as Decimal: return "\(decimal)"
        case let uuid as UUID: return uuid.uuidString
        case let url as URL: return url.absoluteString
        default: return nil
        }
    }

    private func boolText(_ bool: Bool) -> String {
        switch bools {
        case .literal: bool ? "true" : "false"
        case .numeric: bool ? "1" : "0"
        }
    }

    /// Characters RFC 3986 calls unreserved: the only ones left literal in keys and values.
    static let unreserved = ByteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// Percent-encodes every byte of the UTF-8 text except the RFC 3986 unreserved ones.
    static func percentEncode(_ text: String) -> String {
        if text.utf8.allSatisfy({ unreserved[Int($0)] }) { return text }
        var result: [UInt8] = []
        result.reserveCapacity(text.utf8.count * 3)
        for byte in text.utf8 {
            if unreserved[Int(byte)] { result.append(byte) } else { appendPercentEscape(byte, to: &result) }
        }
        return String(decoding: result, as: UTF8.self)
    }
}

/// One `key=value` pair, already percent-encoded, with the top-level key it sorts by.
struct EncodedPair: Equatable {
    let sortKey: String
    let text: String
}

/// Lets the encoders see through `Optional` values stored as `any Sendable`.
protocol OptionalParameter {
    var wrappedParameter: Any? { get }
}

extension Optional: OptionalParameter {
    var wrappedParameter: Any? {
        switch self {
        case .some(let value): value
        case .none: nil
        }
    }
}

extension NSNumber {
    /// Whether this number came from a boolean (JSON `true`, Swift `Bool`) rather than 0 or 1.
    static func isBoolean(_ number: NSNumber) -> Bool {
        String(cString: number.objCType) == "c"
    }
}
