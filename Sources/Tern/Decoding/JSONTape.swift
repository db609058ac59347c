import Foundation

/// A JSON document read once into a flat list of nodes over its bytes, for `TapeDecoder` and
/// for `JSON` values (`JSON+Tape.swift`): Tern's one JSON grammar.
///
/// Nothing is converted while reading: a string or a number is a byte range, decoded when (and
/// if) a `Decodable` asks for it; member names are compared as bytes. A container's node gives
/// its element count and the index of the node after its last descendant, so skipping a member a
/// type does not decode costs one step. The grammar is RFC 8259's, checked strictly (nesting is
/// limited to 512 levels).
struct JSONTape {
    /// What a node holds.
    enum Kind: UInt8 {
        case null, `true`, `false`, number, string, escapedString, array, object
    }

    /// One value. Scalars: `first..<second` is the value's bytes (a string's without its quotes).
    /// Containers: `first` is the element count (an object's member count), `second` the index
    /// of the node after the container's last descendant. An object's children alternate member
    /// name (a string node) and value.
    struct Node {
        var kind: Kind
        var first: Int
        var second: Int
    }

    /// Why the text is not JSON, and at which byte offset.
    struct Failure: Error {
        let reason: String
        let offset: Int
    }

    /// The document's bytes (copied once: a decoder may outlive the caller's buffer).
    let bytes: [UInt8]
    /// The nodes in document order; the root is node 0 (and the last one is `nullNode`).
    private(set) var nodes: [Node] = []

    /// Reads `data` as one JSON value surrounded by optional whitespace. `asJSONDecoder`: take
    /// what `JSONDecoder` takes, for `TapeDecoder` (a comma before a closing bracket; no unpaired
    /// surrogate escape); else RFC 8259's grammar, with an unpaired surrogate read as U+FFFD.
    init(_ data: Data, asJSONDecoder: Bool) throws(Failure) {
        bytes = [UInt8](data)
        var reader = Reader(bytes: bytes, asJSONDecoder: asJSONDecoder)
        try reader.document()
        nodes = reader.nodes
        nodes.append(Node(kind: .null, first: 0, second: 0))
    }

    /// A null node after the document, for a decoder that stands on an absent member.
    var nullNode: Int { nodes.count - 1 }

    /// The index of the node after `index` and all its descendants.
    @inline(__always)
    func next(after index: Int) -> Int {
        let node = nodes[index]
        return node.kind.rawValue >= Kind.array.rawValue ? node.second : index + 1
    }
}

extension JSONTape {
    /// The reading pass: appends nodes while it checks the grammar.
    private struct Reader {
        let bytes: [UInt8]
        let asJSONDecoder: Bool
        var nodes: [Node]
        var index = 0
        var depth = 0

        init(bytes: [UInt8], asJSONDecoder: Bool) {
            self.bytes = bytes
            self.asJSONDecoder = asJSONDecoder
            // About one node per 6 bytes in typical API payloads: few regrowths, little waste.
            nodes = []
            nodes.reserveCapacity(bytes.count / 6 + 4)
        }

        func failure(_ reason: String) -> Failure { Failure(reason: reason, offset: index) }

        mutating func document() throws(Failure) {
            // The closure does not throw: the standard library of Swift 6.0 (Xcode 16.0) has no
            // typed-throws `withUnsafeBufferPointer`, so a typed error cannot leave it directly.
            let outcome: Failure? = bytes.withUnsafeBufferPointer { (buffer: UnsafeBufferPointer<UInt8>) -> Failure? in
                do throws(Failure) {
                    try readDocument(buffer)
                    return nil
                } catch {
                    return error
                }
            }
            if let outcome { throw outcome }
        }

        private mutating func readDocument(_ buffer: UnsafeBufferPointer<UInt8>) throws(Failure) {
            skipWhitespace(buffer)
            try value(buffer)
            skipWhitespace(buffer)
            guard index == buffer.count else { throw failure("unexpected characters after the value") }
        }

        @inline(__always)
        mutating func skipWhitespace(_ buffer: UnsafeBufferPointer<UInt8>) {
            while index < buffer.count {
                switch buffer[index] {
                case 0x20, 0x0A, 0x0D, 0x09: index += 1
                default: return
                }
            }
        }

        mutating func value(_ buffer: UnsafeBufferPointer<UInt8>) throws(Failure) {
            guard index < buffer.count else { throw failure("unexpected end of input") }
            switch buffer[index] {
            case UInt8(ascii: "\""): try string(buffer)
            case UInt8(ascii: "{"): try container(buffer, kind: .object, closing: UInt8(ascii: "}"))
            case UInt8(ascii: "["): try container(buffer, kind: .array, closing: UInt8(ascii: "]"))
            case UInt8(ascii: "t"): try literal(buffer, "true", .true)
            case UInt8(ascii: "f"): try literal(buffer, "false", .false)
            case UInt8(ascii: "n"): try literal(buffer, "null", .null)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number(buffer)
            default: throw failure("unexpected character")
            }
        }

        mutating func literal(_ buffer: UnsafeBufferPointer<UInt8>, _ word: StaticString, _ kind: Kind) throws(Failure) {
            let count = word.utf8CodeUnitCount
            guard index + count <= buffer.count else { throw failure("unexpected end of input") }
            for offset in 0..<count where buffer[index + offset] != word.utf8Start[offset] { throw failure("invalid literal") }
            nodes.append(Node(kind: kind, first: index, second: index + count))
            index += count
        }

        /// An array or an object; its node is completed (count, end) once its children are read.
        mutating func container(_ buffer: UnsafeBufferPointer<UInt8>, kind: Kind, closing: UInt8) throws(Failure) {
            depth += 1
            guard depth <= 512 else { throw failure("nesting deeper than 512 levels") }
            let slot = nodes.count
            nodes.append(Node(kind: kind, first: 0, second: 0))
            index += 1
            skipWhitespace(buffer)
            var count = 0
            if index < buffer.count, buffer[index] == closing {
                index += 1
            } else {
                while true {
                    skipWhitespace(buffer)
                    if kind == .object {
                        guard index < buffer.count, buffer[index] == UInt8(ascii: "\"") else { throw failure("expected a member name") }
                        try string(buffer)
                        skipWhitespace(buffer)
                        guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else { throw failure("expected ':'") }
                        index += 1
                        skipWhitespace(buffer)
                    }
                    try value(buffer)
                    count += 1
                    skipWhitespace(buffer)
                    guard index < buffer.count else { throw failure(kind == .object ? "expected ',' or '}'" : "expected ',' or ']'") }
                    if buffer[index] == UInt8(ascii: ",") {
                        index += 1
                        // A comma before the closing bracket: JSONDecoder accepts it.
                        skipWhitespace(buffer)
                        if asJSONDecoder, index < buffer.count, buffer[index] == closing {
                            index += 1
                            break
                        }
                    } else if buffer[index] == closing {
                        index += 1
                        break
                    } else {
                        throw failure(kind == .object ? "expected ',' or '}'" : "expected ',' or ']'")
                    }
                }
            }
            nodes[slot].first = count
            nodes[slot].second = nodes.count
            depth -= 1
        }

        /// A string from its opening quote: its node is the bytes between the quotes; escapes are
        /// checked here and undone when the string is read.
        mutating func string(_ buffer: UnsafeBufferPointer<UInt8>) throws(Failure) {
            index += 1
            let start = index
            var escaped = false
            while index < buffer.count {
                let byte = buffer[index]
                if byte == UInt8(ascii: "\"") {
                    nodes.append(Node(kind: escaped ? .escapedString : .string, first: start, second: index))
                    index += 1
                    return
                }
                if byte == UInt8(ascii: "\\") {
                    escaped = true
                    index += 1
                    guard index < buffer.count else { break }
                    switch buffer[index] {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        index += 1
                    case UInt8(ascii: "u"):
                        try unicodeEscape(buffer)
                    default:
                        throw failure("invalid escape")
                    }
                    continue
                }
                guard byte >= 0x20 else { throw failure("control character in a string") }
                index += 1
            }
            throw failure("unterminated string")
        }

        /// A `\\uXXXX` escape from its `u`; a surrogate must be half of a pair where JSONDecoder
        /// requires it.
        mutating func unicodeEscape(_ buffer: UnsafeBufferPointer<UInt8>) throws(Failure) {
            let first = try hexQuad(buffer, at: index + 1)
            index += 5
            switch first {
            case 0xD800..<0xDC00:
                if index + 1 < buffer.count, buffer[index] == UInt8(ascii: "\\"), buffer[index + 1] == UInt8(ascii: "u"),
                    case 0xDC00..<0xE000 = try hexQuad(buffer, at: index + 2)
                {
                    index += 6
                } else if asJSONDecoder {
                    throw failure("a high surrogate without its low half")
                }
            case 0xDC00..<0xE000 where asJSONDecoder:
                throw failure("a low surrogate without its high half")
            default:
                break
            }
        }

        func hexQuad(_ buffer: UnsafeBufferPointer<UInt8>, at start: Int) throws(Failure) -> UInt32 {
            guard start + 4 <= buffer.count else { throw failure("unterminated \\u escape") }
            var value: UInt32 = 0
            for byte in buffer[start..<start + 4] {
                guard let digit = byte.hexValue else { throw failure("invalid \\u escape") }
                value = value << 4 | UInt32(digit)
            }
            return value
        }

        /// A number per the JSON grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
        mutating func number(_ buffer: UnsafeBufferPointer<UInt8>) throws(Failure) {
            let start = index
            if buffer[index] == UInt8(ascii: "-") { index += 1 }
            guard index < buffer.count, buffer[index].isDigit else { throw failure("invalid number") }
            if buffer[index] == UInt8(ascii: "0") {
                index += 1
                if index < buffer.count, buffer[index].isDigit { throw failure("leading zero in a number") }
            } else {
                while index < buffer.count, buffer[index].isDigit { index += 1 }
            }
            if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
                index += 1
                guard index < buffer.count, buffer[index].isDigit else { throw failure("expected a digit after '.'") }
                while index < buffer.count, buffer[index].isDigit { index += 1 }
            }
            if index < buffer.count, buffer[index] == UInt8(ascii: "e") || buffer[index] == UInt8(ascii: "E") {
                index += 1
                if index < buffer.count, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") { index += 1 }
                guard index < buffer.count, buffer[index].isDigit else { throw failure("expected a digit in the exponent") }
                while index < buffer.count, buffer[index].isDigit { index += 1 }
            }
            nodes.append(Node(kind: .number, first: start, second: index))
        }
    }
}

extension UInt8 {
    @inline(__always) fileprivate var isDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }

    /// The value of a hexadecimal digit (both parsers read `\u` escapes with it).
    var hexValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): self - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
