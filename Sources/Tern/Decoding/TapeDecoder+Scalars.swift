import Foundation

// Strings, numbers and the types JSONDecoder decodes its own way (dates, data, URLs, decimals,
// dictionaries with string keys), read from the current node's bytes.

extension TapeDecoder {
    func decodeString() throws -> String { try string(at: node) { path } }

    func bool(at target: Int, path: () -> CodingPathNode) throws -> Bool {
        switch tape.nodes[target].kind {
        case .true: return true
        case .false: return false
        default: throw mismatch(Bool.self, at: target, path: path())
        }
    }

    func string(at target: Int, path: () -> CodingPathNode) throws -> String {
        switch tape.nodes[target].kind {
        case .string, .escapedString: return tape.string(at: target)
        default: throw mismatch(String.self, at: target, path: path())
        }
    }

    /// The number's text, for the slow paths and error messages.
    private func numberText(at target: Int) -> String {
        let current = tape.nodes[target]
        return tape.bytes.withUnsafeBufferPointer { buffer in
            String(decoding: UnsafeBufferPointer(rebasing: buffer[current.first..<current.second]), as: UTF8.self)
        }
    }

    func integer<T: FixedWidthInteger>(_ type: T.Type, at target: Int, path: () -> CodingPathNode) throws -> T {
        guard tape.nodes[target].kind == .number else { throw mismatch(T.self, at: target, path: path()) }
        if let value: T = tape.integer(at: target) { return value }
        // A fraction or an exponent, or out of range: exact integers in floating point pass, as
        // in JSONDecoder ("1e3" is 1000, "1.5" does not fit).
        let text = numberText(at: target)
        if let double = Double(text), let exact = T(exactly: double) { return exact }
        throw numberDoesNotFit(text, T.self)
    }

    /// JSONDecoder reports a number that does not fit its type as invalid JSON, at the root.
    private func numberDoesNotFit(_ text: String, _ type: Any.Type) -> DecodingError {
        .dataCorrupted(
            .init(
                codingPath: [], debugDescription: "The given data was not valid JSON.",
                underlyingError: TapeSyntaxError(description: "Number <\(text)> does not fit in \(type).")))
    }

    /// Whether a number's text has a digit other than 0 before its exponent: one that reads as
    /// zero then underflowed.
    private static func hasNonZeroDigit(_ text: String) -> Bool {
        for byte in text.utf8 {
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") { return false }
            if byte >= UInt8(ascii: "1") && byte <= UInt8(ascii: "9") { return true }
        }
        return false
    }

    func float<T: BinaryFloatingPoint & LosslessStringConvertible>(_ type: T.Type, at target: Int, path: () -> CodingPathNode) throws -> T {
        switch tape.nodes[target].kind {
        case .number:
            // An integer of up to 15 digits converts exactly; "-0" keeps its sign through the text.
            if let small = tape.smallInteger(at: target), small != 0 { return T(small) }
            let text = numberText(at: target)
            guard let value = T(text), value.isFinite, !value.isZero || !Self.hasNonZeroDigit(text) else {
                throw numberDoesNotFit(text, T.self)
            }
            return value
        case .string, .escapedString:
            if case .convertFromString(let positiveInfinity, let negativeInfinity, let nan) = options.nonConformingFloats {
                let text = tape.string(at: target)
                if text == positiveInfinity { return .infinity }
                if text == negativeInfinity { return -.infinity }
                if text == nan { return .nan }
            }
            throw mismatch(T.self, at: target, path: path())
        default:
            throw mismatch(T.self, at: target, path: path())
        }
    }

    func decodeDate() throws -> Date {
        switch options.dates {
        case .deferredToDate:
            return try Date(from: self)
        case .secondsSince1970:
            return Date(timeIntervalSince1970: try float(Double.self, at: node) { path })
        case .millisecondsSince1970:
            return Date(timeIntervalSince1970: try float(Double.self, at: node) { path } / 1000)
        case .iso8601:
            let text = try decodeString()
            guard let date = iso8601Formatter().date(from: text) else {
                // At the root, as JSONDecoder reports it.
                throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "Expected date string to be ISO8601-formatted."))
            }
            return date
        #if canImport(Darwin)
        // Elsewhere `.formatted` is a function that makes a `.custom` strategy.
        case .formatted(let formatter):  // available: the date strategy, not Date.formatted (macOS 10.10)
            let text = try decodeString()
            guard let date = formatter.date(from: text) else { throw corrupted("Date string does not match format expected by formatter.") }
            return date
        #endif
        case .custom(let closure):
            return try closure(self)
        @unknown default:
            return try Date(from: self)
        }
    }

    func decodeData() throws -> Data {
        switch options.data {
        case .deferredToData:
            return try Data(from: self)
        case .base64:
            let text = try decodeString()
            guard let data = Data(base64Encoded: text) else { throw corrupted("Encountered Data is not valid Base64.") }
            return data
        case .custom(let closure):
            return try closure(self)
        @unknown default:
            return try Data(from: self)
        }
    }

    func decodeURL() throws -> URL {
        let text = try decodeString()
        guard let url = URL(string: text) else { throw corrupted("Invalid URL string.") }
        return url
    }

    func decodeDecimal() throws -> Decimal {
        guard kind == .number else { throw mismatch(Decimal.self) }
        let text = numberText(at: node)
        guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
            throw numberDoesNotFit(text, Decimal.self)
        }
        return decimal
    }
}

/// The ISO 8601 formatter of the `.iso8601` date strategy, one per thread (formatters are not
/// safe to share while they parse).
private func iso8601Formatter() -> ISO8601DateFormatter {
    let key = "tern.iso8601-formatter"
    if let formatter = Thread.current.threadDictionary[key] as? ISO8601DateFormatter { return formatter }
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = .withInternetDateTime
    Thread.current.threadDictionary[key] = formatter
    return formatter
}

/// `[String: Value]`: decoded member by member with the names as written, as `JSONDecoder` does,
/// so a key strategy does not rename a dictionary's keys.
protocol StringKeyedDictionary {
    static func decodeMembers(from decoder: TapeDecoder) throws -> Self
}

extension Dictionary: StringKeyedDictionary where Key == String, Value: Decodable {
    static func decodeMembers(from decoder: TapeDecoder) throws -> [String: Value] {
        guard decoder.kind == .object else {
            if decoder.kind == .null {
                throw DecodingError.valueNotFound(
                    [String: Any].self,
                    .init(
                        codingPath: decoder.codingPath, debugDescription: "Cannot get keyed decoding container -- found null value instead")
                )
            }
            throw decoder.mismatch([String: Any].self)
        }
        let tape = decoder.tape
        let object = decoder.node
        var result: [String: Value] = [:]
        result.reserveCapacity(tape.nodes[object].first)
        var member = object + 1
        let end = tape.nodes[object].second
        while member < end {
            let name = tape.string(at: member)
            let value = member + 1
            result[name] = try decoder.at(value, path: decoder.path.appending(AnyKey(stringValue: name))) {
                try decoder.decodeValue(Value.self)
            }
            member = tape.next(after: value)
        }
        return result
    }
}

extension JSONTape {
    /// The string at a string node, its escapes undone.
    func string(at index: Int) -> String {
        let node = nodes[index]
        return bytes.withUnsafeBufferPointer { buffer in
            let slice = UnsafeBufferPointer(rebasing: buffer[node.first..<node.second])
            guard node.kind == .escapedString else { return String(decoding: slice, as: UTF8.self) }
            return Self.unescape(slice)
        }
    }

    /// The integer at a number node when it is one (digits only) and fits in `T`.
    func integer<T: FixedWidthInteger>(at index: Int) -> T? {
        let node = nodes[index]
        return bytes.withUnsafeBufferPointer { buffer -> T? in
            var position = node.first
            let negative = buffer[position] == UInt8(ascii: "-")
            if negative {
                guard T.isSigned else { return node.second - position == 2 && buffer[position + 1] == UInt8(ascii: "0") ? 0 : nil }
                position += 1
            }
            var value: T = 0
            while position < node.second {
                let byte = buffer[position]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                let (shifted, overflow) = value.multipliedReportingOverflow(by: 10)
                let digit = T(byte - UInt8(ascii: "0"))
                let (next, overflowSum) = negative ? shifted.subtractingReportingOverflow(digit) : shifted.addingReportingOverflow(digit)
                guard !overflow, !overflowSum else { return nil }
                value = next
                position += 1
            }
            return value
        }
    }

    /// The number at a node when it is an integer of at most 15 digits (exact in a `Double`).
    func smallInteger(at index: Int) -> Int64? {
        let node = nodes[index]
        guard node.second - node.first <= 15 else { return nil }
        return integer(at: index)
    }

    private static func unescape(_ slice: UnsafeBufferPointer<UInt8>) -> String {
        var utf8: [UInt8] = []
        utf8.reserveCapacity(slice.count)
        var index = 0
        func hexQuad(at start: Int) -> UInt32 {
            slice[start..<start + 4].reduce(0) { value, byte in value << 4 | UInt32(byte.hexValue ?? 0) }
        }
        while index < slice.count {
            let byte = slice[index]
            guard byte == UInt8(ascii: "\\") else {
                utf8.append(byte)
                index += 1
                continue
            }
            let escape = slice[index + 1]
            index += 2
            switch escape {
            case UInt8(ascii: "b"): utf8.append(0x08)
            case UInt8(ascii: "f"): utf8.append(0x0C)
            case UInt8(ascii: "n"): utf8.append(0x0A)
            case UInt8(ascii: "r"): utf8.append(0x0D)
            case UInt8(ascii: "t"): utf8.append(0x09)
            case UInt8(ascii: "u"):
                // A high surrogate followed by its low half is one scalar; an unpaired one (which
                // only `JSON` values let through) is U+FFFD.
                var scalar = hexQuad(at: index)
                index += 4
                if (0xD800..<0xDC00).contains(scalar), index + 5 < slice.count, slice[index] == UInt8(ascii: "\\"),
                    slice[index + 1] == UInt8(ascii: "u"), case 0xDC00..<0xE000 = hexQuad(at: index + 2)
                {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (hexQuad(at: index + 2) - 0xDC00)
                    index += 6
                }
                utf8.append(contentsOf: String(Unicode.Scalar(scalar) ?? "\u{FFFD}").utf8)
            default: utf8.append(escape)  // " \ /
            }
        }
        return String(decoding: utf8, as: UTF8.self)
    }
}
