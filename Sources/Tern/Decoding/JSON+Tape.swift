import Foundation

extension JSON {
    /// Parses `data` with the tape reader `TapeDecoder` uses (one grammar for both), then builds
    /// the value from the tape. Numbers without a fraction or exponent that fit in `Int64` are
    /// `.int`, others `.double`; duplicate keys keep the last value; invalid UTF-8 in strings
    /// becomes U+FFFD; nesting deeper than 512 levels is refused.
    static func parse(_ data: Data) throws(JSONTape.Failure) -> JSON {
        let tape = try JSONTape(data, asJSONDecoder: false)
        return JSON(tape, at: 0)
    }

    /// The value at node `index` of `tape`.
    private init(_ tape: JSONTape, at index: Int) {
        let node = tape.nodes[index]
        switch node.kind {
        case .null: self = .null
        case .true: self = .bool(true)
        case .false: self = .bool(false)
        case .string, .escapedString: self = .string(tape.string(at: index))
        case .number:
            if let integer: Int64 = tape.integer(at: index) {
                self = .int(integer)
            } else {
                let text = tape.bytes[node.first..<node.second].withUnsafeBufferPointer { String(decoding: $0, as: UTF8.self) }
                self = .double(Double(text) ?? .nan)
            }
        case .array:
            var items: [JSON] = []
            items.reserveCapacity(node.first)
            var child = index + 1
            for _ in 0..<node.first {
                items.append(JSON(tape, at: child))
                child = tape.next(after: child)
            }
            self = .array(items)
        case .object:
            var members: [String: JSON] = [:]
            members.reserveCapacity(node.first)
            var child = index + 1
            for _ in 0..<node.first {
                let value = tape.next(after: child)
                members[tape.string(at: child)] = JSON(tape, at: value)
                child = tape.next(after: value)
            }
            self = .object(members)
        }
    }
}
