import Foundation

/// Parses JSON text (RFC 8259, any top-level value) from UTF-8 bytes straight into `JSON`.
///
/// Tern's own parser, not `JSONSerialization`: on Linux that one builds Foundation objects and
/// every conversion to `JSON` is a dynamic cast, about 200 µs for a 1 KB document here. This one
/// reads the bytes once. Numbers without a fraction or exponent that fit in `Int64` are `.int`,
/// others `.double`; duplicate keys keep the last value; invalid UTF-8 inside strings is replaced
/// with U+FFFD; nesting deeper than 512 levels is refused rather than exhausting the stack.
struct JSONParser {
    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0
    private static let maximumDepth = 512

    /// Why the text is not JSON, and at which byte offset.
    struct Failure: Error {
        let reason: String
        let offset: Int
    }

    /// Parses `data` as one JSON value surrounded by optional whitespace.
    static func parse(_ data: Data) throws(Failure) -> JSON {
        let result: Result<JSON, Failure> = data.withUnsafeBytes { raw in
            var parser = JSONParser(bytes: raw.bindMemory(to: UInt8.self))
            return Result { () throws(Failure) in try parser.document() }
        }
        return try result.get()
    }

    private init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    private mutating func document() throws(Failure) -> JSON {
        skipWhitespace()
        let value = try self.value()
        skipWhitespace()
        guard index == bytes.count else { throw failure("unexpected characters after the value") }
        return value
    }

    private func failure(_ reason: String) -> Failure { Failure(reason: reason, offset: index) }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func value() throws(Failure) -> JSON {
        guard let byte = current else { throw failure("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected character")
        }
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw failure("unexpected end of input") }
        for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { throw failure("invalid literal") }
        index += count
    }

    private mutating func nested<Value>(_ body: (inout JSONParser) throws(Failure) -> Value) throws(Failure) -> Value {
        depth += 1
        guard depth <= Self.maximumDepth else { throw failure("nesting deeper than \(Self.maximumDepth) levels") }
        defer { depth -= 1 }
        return try body(&self)
    }

    private mutating func object() throws(Failure) -> JSON {
        try nested { (parser: inout JSONParser) throws(Failure) -> JSON in
            parser.index += 1
            var members: [String: JSON] = [:]
            parser.skipWhitespace()
            if parser.current == UInt8(ascii: "}") { parser.index += 1; return .object(members) }
            while true {
                parser.skipWhitespace()
                guard parser.current == UInt8(ascii: "\"") else { throw parser.failure("expected a member name") }
                let key = try parser.string()
                parser.skipWhitespace()
                guard parser.current == UInt8(ascii: ":") else { throw parser.failure("expected ':'") }
                parser.index += 1
                parser.skipWhitespace()
                members[key] = try parser.value()
                parser.skipWhitespace()
                switch parser.current {
                case UInt8(ascii: ","): parser.index += 1
                case UInt8(ascii: "}"): parser.index += 1; return .object(members)
                default: throw parser.failure("expected ',' or '}'")
                }
            }
        }
    }

    private mutating func array() throws(Failure) -> JSON {
        try nested { (parser: inout JSONParser) throws(Failure) -> JSON in
            parser.index += 1
            var items: [JSON] = []
            parser.skipWhitespace()
            if parser.current == UInt8(ascii: "]") { parser.index += 1; return .array(items) }
            while true {
                parser.skipWhitespace()
                items.append(try parser.value())
                parser.skipWhitespace()
                switch parser.current {
                case UInt8(ascii: ","): parser.index += 1
                case UInt8(ascii: "]"): parser.index += 1; return .array(items)
                default: throw parser.failure("expected ',' or ']'")
                }
            }
        }
    }

    /// A string starting at the opening quote; without escapes it is decoded in one go.
    private mutating func string() throws(Failure) -> String {
        index += 1
        let start = index
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                defer { index += 1 }
                return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { return try escapedString(from: start) }
            guard byte >= 0x20 else { throw failure("control character in a string") }
            index += 1
        }
        throw failure("unterminated string")
    }

    private mutating func escapedString(from start: Int) throws(Failure) -> String {
        var utf8 = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escape = current else { throw failure("unterminated string") }
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"): utf8.append(contentsOf: String(try unicodeEscape()).utf8)
                default: throw failure("invalid escape")
                }
            case 0..<0x20:
                throw failure("control character in a string")
            default:
                utf8.append(byte)
            }
        }
        throw failure("unterminated string")
    }

    /// The character of a `\uXXXX` escape (after the `u`), joining a surrogate pair; a lone
    /// surrogate becomes U+FFFD.
    private mutating func unicodeEscape() throws(Failure) -> Character {
        let first = try hexQuad()
        if (0xD800..<0xDC00).contains(first), index + 1 < bytes.count,
            bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
        {
            let mark = index
            index += 2
            let second = try hexQuad()
            if (0xDC00..<0xE000).contains(second) {
                return Character(Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)) ?? "\u{FFFD}")
            }
            index = mark
        }
        return Character(Unicode.Scalar(first) ?? "\u{FFFD}")
    }

    private mutating func hexQuad() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("unterminated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = bytes[index].hexValue else { throw failure("invalid \\u escape") }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// A number per the JSON grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    private mutating func number() throws(Failure) -> JSON {
        let start = index
        let negative = current == UInt8(ascii: "-")
        if negative { index += 1 }
        guard let first = current, isDigit(first) else { throw failure("invalid number") }
        var integer: Int64? = 0
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = current, isDigit(next) { throw failure("leading zero in a number") }
        } else {
            while let byte = current, isDigit(byte) {
                let digit = Int64(byte - UInt8(ascii: "0"))
                integer = integer.flatMap { value in
                    let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
                    let (sum, overflowSum) = shifted.addingReportingOverflow(negative ? -digit : digit)
                    return overflow || overflowSum ? nil : sum
                }
                index += 1
            }
        }
        var isInteger = true
        if current == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard let byte = current, isDigit(byte) else { throw failure("expected a digit after '.'") }
            while let byte = current, isDigit(byte) { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let byte = current, isDigit(byte) else { throw failure("expected a digit in the exponent") }
            while let byte = current, isDigit(byte) { index += 1 }
        }
        if isInteger, let integer { return .int(integer) }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let double = Double(text) else { throw failure("invalid number") }
        return .double(double)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
