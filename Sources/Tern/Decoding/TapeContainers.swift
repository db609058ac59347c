import Foundation

/// A JSON object read through `KeyedDecodingContainer`: members are found by comparing their
/// names' bytes with the key's (the first of equal names wins, as in `JSONDecoder`); with a key
/// strategy the converted names are made once, when the container is.
struct TapeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: TapeDecoder
    let object: Int
    let path: CodingPathNode
    /// The converted member names and their value nodes, with a key strategy only.
    private let convertedMembers: [(name: String, value: Int)]?

    init(decoder: TapeDecoder, object: Int, path: CodingPathNode) {
        self.decoder = decoder
        self.object = object
        self.path = path
        guard decoder.options.convertsKeys else {
            convertedMembers = nil
            return
        }
        let tape = decoder.tape
        var members: [(name: String, value: Int)] = []
        var member = object + 1
        while member < tape.nodes[object].second {
            members.append((decoder.options.convertedName(tape.string(at: member), at: path), member + 1))
            member = tape.next(after: member + 1)
        }
        convertedMembers = members
    }

    var codingPath: [any CodingKey] { path.keys }

    var allKeys: [Key] {
        if let convertedMembers { return convertedMembers.compactMap { Key(stringValue: $0.name) } }
        var keys: [Key] = []
        forEachMember { name, _ in
            if let key = Key(stringValue: decoder.tape.string(at: name)) { keys.append(key) }
        }
        return keys
    }

    private func forEachMember(_ body: (_ name: Int, _ value: Int) -> Void) {
        let tape = decoder.tape
        let end = tape.nodes[object].second
        var member = object + 1
        while member < end {
            body(member, member + 1)
            member = tape.next(after: member + 1)
        }
    }

    /// The value node of the member named by `key`, if there is one.
    private func valueNode(for key: Key) -> Int? {
        var name = key.stringValue
        if let convertedMembers { return convertedMembers.first(where: { $0.name == name })?.value }
        let tape = decoder.tape
        var found: Int?
        name.withUTF8 { wanted in
            tape.bytes.withUnsafeBufferPointer { bytes in
                let end = tape.nodes[object].second
                var member = object + 1
                while member < end {
                    let node = tape.nodes[member]
                    if node.kind == .string {
                        if node.second - node.first == wanted.count,
                            wanted.isEmpty || memcmp(bytes.baseAddress! + node.first, wanted.baseAddress!, wanted.count) == 0
                        {
                            found = member + 1
                            return
                        }
                    } else if tape.string(at: member) == key.stringValue {
                        found = member + 1
                        return
                    }
                    member = tape.next(after: member + 1)
                }
            }
        }
        return found
    }

    private func require(_ key: Key) throws -> Int {
        guard let value = valueNode(for: key) else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return value
    }

    func contains(_ key: Key) -> Bool { valueNode(for: key) != nil }

    func decodeNil(forKey key: Key) throws -> Bool { decoder.tape.nodes[try require(key)].kind == .null }

    /// Reads the member named by `key` with `read`, which gets the member's value node and its
    /// path (made only if asked for).
    @inline(__always)
    private func member<Result>(_ key: Key, _ read: (_ value: Int, _ path: () -> CodingPathNode) throws -> Result) throws -> Result {
        let value = try require(key)
        return try read(value) { path.appending(key) }
    }

    /// The same, nil when the member is absent or null.
    @inline(__always)
    private func memberIfPresent<Result>(
        _ key: Key, _ read: (_ value: Int, _ path: () -> CodingPathNode) throws -> Result
    ) throws -> Result? {
        guard let value = valueNode(for: key), decoder.tape.nodes[value].kind != .null else { return nil }
        return try read(value) { path.appending(key) }
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try member(key) { value, path in try decoder.bool(at: value, path: path) }
    }
    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try member(key) { value, path in try decoder.string(at: value, path: path) }
    }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try member(key) { value, path in try decoder.float(Double.self, at: value, path: path) }
    }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try member(key) { value, path in try decoder.float(Float.self, at: value, path: path) }
    }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try member(key) { value, path in try decoder.integer(Int.self, at: value, path: path) }
    }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        try member(key) { value, path in try decoder.integer(Int8.self, at: value, path: path) }
    }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try member(key) { value, path in try decoder.integer(Int16.self, at: value, path: path) }
    }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try member(key) { value, path in try decoder.integer(Int32.self, at: value, path: path) }
    }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try member(key) { value, path in try decoder.integer(Int64.self, at: value, path: path) }
    }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        try member(key) { value, path in try decoder.integer(UInt.self, at: value, path: path) }
    }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try member(key) { value, path in try decoder.integer(UInt8.self, at: value, path: path) }
    }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try member(key) { value, path in try decoder.integer(UInt16.self, at: value, path: path) }
    }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try member(key) { value, path in try decoder.integer(UInt32.self, at: value, path: path) }
    }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try member(key) { value, path in try decoder.integer(UInt64.self, at: value, path: path) }
    }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try member(key) { value, path in try decoder.decodeValue(T.self, at: value, path: path) }
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try memberIfPresent(key) { value, path in try decoder.bool(at: value, path: path) }
    }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try memberIfPresent(key) { value, path in try decoder.string(at: value, path: path) }
    }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try memberIfPresent(key) { value, path in try decoder.float(Double.self, at: value, path: path) }
    }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        try memberIfPresent(key) { value, path in try decoder.float(Float.self, at: value, path: path) }
    }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try memberIfPresent(key) { value, path in try decoder.integer(Int.self, at: value, path: path) }
    }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
        try memberIfPresent(key) { value, path in try decoder.integer(Int8.self, at: value, path: path) }
    }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
        try memberIfPresent(key) { value, path in try decoder.integer(Int16.self, at: value, path: path) }
    }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        try memberIfPresent(key) { value, path in try decoder.integer(Int32.self, at: value, path: path) }
    }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try memberIfPresent(key) { value, path in try decoder.integer(Int64.self, at: value, path: path) }
    }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
        try memberIfPresent(key) { value, path in try decoder.integer(UInt.self, at: value, path: path) }
    }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
        try memberIfPresent(key) { value, path in try decoder.integer(UInt8.self, at: value, path: path) }
    }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        try memberIfPresent(key) { value, path in try decoder.integer(UInt16.self, at: value, path: path) }
    }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        try memberIfPresent(key) { value, path in try decoder.integer(UInt32.self, at: value, path: path) }
    }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        try memberIfPresent(key) { value, path in try decoder.integer(UInt64.self, at: value, path: path) }
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try memberIfPresent(key) { value, path in try decoder.decodeValue(T.self, at: value, path: path) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try member(key) { value, path in try decoder.at(value, path: path()) { try decoder.container(keyedBy: NestedKey.self) } }
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try member(key) { value, path in try decoder.at(value, path: path()) { try decoder.unkeyedContainer() } }
    }

    func superDecoder() throws -> any Decoder { nestedDecoder(valueNode(for: "super"), path: path.appending(AnyKey(stringValue: "super"))) }

    func superDecoder(forKey key: Key) throws -> any Decoder { nestedDecoder(valueNode(for: key), path: path.appending(key)) }

    private func valueNode(for name: String) -> Int? {
        guard let key = Key(stringValue: name) else {
            var found: Int?
            forEachMember { member, value in if found == nil, decoder.tape.string(at: member) == name { found = value } }
            return found
        }
        return valueNode(for: key)
    }

    /// A decoder of its own on `value` (on null when the member is absent, as in `JSONDecoder`).
    private func nestedDecoder(_ value: Int?, path: CodingPathNode) -> any Decoder {
        let nested = TapeDecoder(tape: decoder.tape, options: decoder.options)
        nested.path = path
        nested.node = value ?? decoder.tape.nullNode
        return nested
    }
}

/// A JSON array read through `UnkeyedDecodingContainer`.
struct TapeUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: TapeDecoder
    let path: CodingPathNode
    let count: Int?
    private(set) var currentIndex = 0
    /// The node of the element at `currentIndex`.
    private var element: Int

    init(decoder: TapeDecoder, array: Int, path: CodingPathNode) {
        self.decoder = decoder
        self.path = path
        count = decoder.tape.nodes[array].first
        element = array + 1
    }

    var codingPath: [any CodingKey] { path.keys }
    var isAtEnd: Bool { currentIndex >= count! }

    /// Reads the current element with `read` (which gets its node and its path, made only if
    /// asked for) and moves past it.
    private mutating func next<Result>(
        _ type: Any.Type, _ read: (_ decoder: TapeDecoder, _ element: Int, _ path: () -> CodingPathNode) throws -> Result
    ) throws -> Result {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, .init(codingPath: path.appending(index: currentIndex).keys, debugDescription: "Unkeyed container is at end."))
        }
        let (index, base) = (currentIndex, path)
        let result = try read(decoder, element) { base.appending(index: index) }
        element = decoder.tape.next(after: element)
        currentIndex += 1
        return result
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                Any?.self, .init(codingPath: path.appending(index: currentIndex).keys, debugDescription: "Unkeyed container is at end."))
        }
        guard decoder.tape.nodes[element].kind == .null else { return false }
        element += 1
        currentIndex += 1
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool {
        try next(type) { decoder, value, path in try decoder.bool(at: value, path: path) }
    }
    mutating func decode(_ type: String.Type) throws -> String {
        try next(type) { decoder, value, path in try decoder.string(at: value, path: path) }
    }
    mutating func decode(_ type: Double.Type) throws -> Double {
        try next(type) { decoder, value, path in try decoder.float(Double.self, at: value, path: path) }
    }
    mutating func decode(_ type: Float.Type) throws -> Float {
        try next(type) { decoder, value, path in try decoder.float(Float.self, at: value, path: path) }
    }
    mutating func decode(_ type: Int.Type) throws -> Int {
        try next(type) { decoder, value, path in try decoder.integer(Int.self, at: value, path: path) }
    }
    mutating func decode(_ type: Int8.Type) throws -> Int8 {
        try next(type) { decoder, value, path in try decoder.integer(Int8.self, at: value, path: path) }
    }
    mutating func decode(_ type: Int16.Type) throws -> Int16 {
        try next(type) { decoder, value, path in try decoder.integer(Int16.self, at: value, path: path) }
    }
    mutating func decode(_ type: Int32.Type) throws -> Int32 {
        try next(type) { decoder, value, path in try decoder.integer(Int32.self, at: value, path: path) }
    }
    mutating func decode(_ type: Int64.Type) throws -> Int64 {
        try next(type) { decoder, value, path in try decoder.integer(Int64.self, at: value, path: path) }
    }
    mutating func decode(_ type: UInt.Type) throws -> UInt {
        try next(type) { decoder, value, path in try decoder.integer(UInt.self, at: value, path: path) }
    }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 {
        try next(type) { decoder, value, path in try decoder.integer(UInt8.self, at: value, path: path) }
    }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 {
        try next(type) { decoder, value, path in try decoder.integer(UInt16.self, at: value, path: path) }
    }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 {
        try next(type) { decoder, value, path in try decoder.integer(UInt32.self, at: value, path: path) }
    }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 {
        try next(type) { decoder, value, path in try decoder.integer(UInt64.self, at: value, path: path) }
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try next(type) { decoder, value, path in try decoder.decodeValue(T.self, at: value, path: path) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next(KeyedDecodingContainer<NestedKey>.self) { decoder, value, path in
            try decoder.at(value, path: path()) { try decoder.container(keyedBy: NestedKey.self) }
        }
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next((any UnkeyedDecodingContainer).self) { decoder, value, path in
            try decoder.at(value, path: path()) { try decoder.unkeyedContainer() }
        }
    }

    mutating func superDecoder() throws -> any Decoder {
        try next((any Decoder).self) { decoder, value, path in
            let nested = TapeDecoder(tape: decoder.tape, options: decoder.options)
            (nested.node, nested.path) = (value, path())
            return nested
        }
    }
}
