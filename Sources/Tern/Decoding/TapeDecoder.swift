import Foundation

/// The `Decoder` behind every `Decodable` request: decodes straight from a `JSONTape`, with the
/// strategies of the `JSONDecoder` it stands in for, and the same values and the same errors
/// (`keyNotFound`, `typeMismatch`, `valueNotFound`, `dataCorrupted`, with their coding paths).
///
/// One instance decodes one document. It is also the single-value container of the value it
/// stands on; a nested value is decoded by moving it to that value and back, so only containers
/// and nested decoders allocate.
final class TapeDecoder: Decoder, SingleValueDecodingContainer {
    let tape: JSONTape
    let options: DecodingOptions
    /// The node the decoder stands on.
    var node: Int
    /// Where that node is in the document.
    var path: CodingPathNode

    init(tape: JSONTape, options: DecodingOptions) {
        self.tape = tape
        self.options = options
        node = 0
        path = .root
    }

    /// Decodes `T` from `data` as `decoder` would (throws what it would throw, but for the
    /// wording of a `dataCorrupted` description about invalid JSON).
    static func decode<T: Decodable>(_ type: T.Type, from data: Data, options: DecodingOptions) throws -> T {
        let tape: JSONTape
        do {
            tape = try JSONTape(data, asJSONDecoder: true)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [], debugDescription: "The given data was not valid JSON.",
                    underlyingError: TapeSyntaxError(description: "invalid JSON at byte \(error.offset): \(error.reason)")))
        }
        return try TapeDecoder(tape: tape, options: options).decodeValue(T.self)
    }

    var codingPath: [any CodingKey] { path.keys }
    var userInfo: [CodingUserInfoKey: Any] { options.userInfo }

    var kind: JSONTape.Kind { tape.nodes[node].kind }

    // MARK: Decoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch kind {
        case .object: return KeyedDecodingContainer(TapeKeyedContainer<Key>(decoder: self, object: node, path: path))
        case .null:
            throw DecodingError.valueNotFound(
                [String: Any].self,
                .init(codingPath: codingPath, debugDescription: "Cannot get keyed decoding container -- found null value instead"))
        default: throw mismatch([String: Any].self)
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        switch kind {
        case .array: return TapeUnkeyedContainer(decoder: self, array: node, path: path)
        case .null:
            throw DecodingError.valueNotFound(
                [Any].self,
                .init(codingPath: codingPath, debugDescription: "Cannot get unkeyed decoding container -- found null value instead"))
        default: throw mismatch([Any].self)
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: Moving

    /// Runs `body` with the decoder on node `target` at `targetPath`, then moves it back.
    @inline(__always)
    func at<Result>(_ target: Int, path targetPath: CodingPathNode, _ body: () throws -> Result) rethrows -> Result {
        let (savedNode, savedPath) = (node, path)
        node = target
        path = targetPath
        defer { (node, path) = (savedNode, savedPath) }
        return try body()
    }

    /// A `T` from the current node: the types `JSONDecoder` treats itself first, then `T`'s own
    /// `init(from:)`.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        try decodeValue(T.self, at: node) { path }
    }

    /// A `T` from node `target`, whose path `makePath` gives: strings, numbers and booleans are
    /// read in place (the path is made only for an error); other types move the decoder there.
    func decodeValue<T: Decodable>(_ type: T.Type, at target: Int, path makePath: () -> CodingPathNode) throws -> T {
        if T.self == String.self { return try string(at: target, path: makePath) as! T }
        if T.self == Int.self { return try integer(Int.self, at: target, path: makePath) as! T }
        if T.self == Double.self { return try float(Double.self, at: target, path: makePath) as! T }
        if T.self == Bool.self { return try bool(at: target, path: makePath) as! T }
        return try at(target, path: makePath()) {
            if T.self == Date.self || T.self == Data.self || T.self == URL.self || T.self == Decimal.self {
                // Checked before any strategy runs, as JSONDecoder does.
                guard kind != .null else { throw mismatch(T.self) }
                if T.self == Date.self { return try decodeDate() as! T }
                if T.self == Data.self { return try decodeData() as! T }
                if T.self == URL.self { return try decodeURL() as! T }
                return try decodeDecimal() as! T
            }
            // Only a key strategy tells a string-keyed dictionary's own decoding from JSONDecoder's
            // (which keeps the names as written); the cast is not free, so it is made only then.
            if options.convertsKeys, let dictionary = T.self as? any StringKeyedDictionary.Type {
                return try dictionary.decodeMembers(from: self) as! T
            }
            return try T(from: self)
        }
    }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool { kind == .null }
    func decode(_ type: Bool.Type) throws -> Bool { try bool(at: node) { path } }
    func decode(_ type: String.Type) throws -> String { try string(at: node) { path } }
    func decode(_ type: Double.Type) throws -> Double { try float(Double.self, at: node) { path } }
    func decode(_ type: Float.Type) throws -> Float { try float(Float.self, at: node) { path } }
    func decode(_ type: Int.Type) throws -> Int { try integer(Int.self, at: node) { path } }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer(Int8.self, at: node) { path } }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer(Int16.self, at: node) { path } }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer(Int32.self, at: node) { path } }
    func decode(_ type: Int64.Type) throws -> Int64 { try integer(Int64.self, at: node) { path } }
    func decode(_ type: UInt.Type) throws -> UInt { try integer(UInt.self, at: node) { path } }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer(UInt8.self, at: node) { path } }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer(UInt16.self, at: node) { path } }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer(UInt32.self, at: node) { path } }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer(UInt64.self, at: node) { path } }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decodeValue(T.self) }

    // MARK: Errors

    /// The error for a value of another type than `expected` (or null) at the current node.
    func mismatch(_ expected: Any.Type) -> DecodingError { mismatch(expected, at: node, path: path) }

    /// The error for a value of another type than `expected` (or null) at node `target`.
    func mismatch(_ expected: Any.Type, at target: Int, path: CodingPathNode) -> DecodingError {
        let found = tape.nodes[target].kind
        if found == .null {
            return .valueNotFound(
                expected, .init(codingPath: path.keys, debugDescription: "Cannot get value of type \(expected) -- found null value instead")
            )
        }
        return .typeMismatch(
            expected,
            .init(codingPath: path.keys, debugDescription: "Expected to decode \(expected) but found \(found.description) instead."))
    }

    func corrupted(_ description: String, underlying: (any Error)? = nil) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath, debugDescription: description, underlyingError: underlying))
    }
}

/// Where the parser stopped, for a `dataCorrupted` error's underlying error.
struct TapeSyntaxError: Error, CustomStringConvertible {
    let description: String
}

extension JSONTape.Kind: CustomStringConvertible {
    var description: String {
        switch self {
        case .null: "null"
        case .true, .false: "bool"
        case .number: "number"
        case .string, .escapedString: "a string"
        case .array: "an array"
        case .object: "a dictionary"
        }
    }
}

/// A coding path kept as a chain from the value back to the root: extending it costs one node
/// only where a container or a nested decoder needs it, and the array is built for errors.
indirect enum CodingPathNode: Sendable {
    case root
    case key(any CodingKey & Sendable, CodingPathNode)
    case index(Int, CodingPathNode)

    /// The path from the root.
    var keys: [any CodingKey] {
        var reversed: [any CodingKey] = []
        var current = self
        while true {
            switch current {
            case .root: return reversed.reversed()
            case .key(let key, let parent): reversed.append(key); current = parent
            case .index(let index, let parent): reversed.append(IndexKey(index)); current = parent
            }
        }
    }

    /// This path and then `key`.
    func appending(_ key: some CodingKey) -> CodingPathNode { .key(AnyKey(key), self) }

    /// This path and then the element at `index`.
    func appending(index: Int) -> CodingPathNode { .index(index, self) }
}

/// A coding key of any kind, kept by its string and integer values (`Sendable`).
struct AnyKey: CodingKey, Sendable {
    let stringValue: String
    let intValue: Int?

    init(_ key: some CodingKey) {
        stringValue = key.stringValue
        intValue = key.intValue
    }

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }

    init?(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

/// The key of an array element in a coding path, as `JSONDecoder` names it ("Index 3").
struct IndexKey: CodingKey, Sendable {
    let stringValue: String
    let intValue: Int?

    init(_ index: Int) {
        stringValue = "Index \(index)"
        intValue = index
    }

    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.init(intValue) }
}
