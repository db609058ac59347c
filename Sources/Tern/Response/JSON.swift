import Foundation

/// An untyped JSON value: what AFNetworking's `NSDictionary` callbacks gave, made `Sendable`.
///
/// Read it with subscripts and typed accessors: `json["data"]?["cities"]?[0]?["name"]?.string`,
/// `json["code"]?.int == 0`. `anyValue` converts back to Foundation types for older code.
/// Thread safety: a value type, safe to share.
public enum JSON: Sendable, Hashable, CustomStringConvertible {
    /// `null`
    case null
    /// `true` or `false`
    case bool(Bool)
    /// A number without a fraction or exponent that fits in 64 bits — on every platform, also
    /// where `Int` has 32 (watchOS): ids and timestamps in milliseconds stay exact.
    case int(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSON])
    /// An object.
    case object([String: JSON])

    /// Parses JSON text (any top-level value, fragments included) with Tern's own parser.
    /// - Throws: `TernError.decoding` saying what is wrong and at which byte, with the data.
    public init(data: Data) throws(TernError) {
        do {
            self = try JSON.parse(data)
        } catch {
            throw .decoding(description: "invalid JSON at byte \(error.offset): \(error.reason)", body: data)
        }
    }

    /// Converts a value produced by `JSONSerialization`.
    /// - Throws: `TernError.decoding` if the value holds a non-JSON type.
    public init(foundation value: Any) throws(TernError) {
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            self = JSON(number: number)
            return
        }
        switch value {
        case is NSNull: self = .null
        case let string as String: self = .string(string)
        case let bool as Bool: self = .bool(bool)
        case let int as Int: self = .int(Int64(int))
        case let int as Int64: self = .int(int)
        case let double as Double: self = .double(double)
        case let array as [Any]:
            var items: [JSON] = []
            items.reserveCapacity(array.count)
            for item in array { items.append(try JSON(foundation: item)) }
            self = .array(items)
        case let dictionary as [String: Any]:
            var object: [String: JSON] = [:]
            object.reserveCapacity(dictionary.count)
            for (key, item) in dictionary { object[key] = try JSON(foundation: item) }
            self = .object(object)
        default:
            throw .decoding(description: "\(type(of: value)) is not a JSON value", body: Data())
        }
    }

    private init(number: NSNumber) {
        switch String(cString: number.objCType) {
        case "c": self = .bool(number.boolValue)
        case "d", "f": self = .double(number.doubleValue)
        default:
            if number.int64Value >= 0 || number.stringValue.hasPrefix("-") {
                self = .int(number.int64Value)
            } else {
                self = .double(number.doubleValue)
            }
        }
    }

    /// The member named `key` of an object; nil for a missing key or a non-object.
    public subscript(key: String) -> JSON? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The element at `index` of an array; nil when out of range or not an array.
    public subscript(index: Int) -> JSON? {
        if case .array(let array) = self, array.indices.contains(index) { return array[index] }
        return nil
    }

    /// The string, for `.string`.
    public var string: String? { if case .string(let value) = self { value } else { nil } }
    /// The integer, for `.int` or a `.double` with no fraction, when it fits in `Int` (on watchOS,
    /// 32 bits: use `int64` for ids and timestamps there).
    public var int: Int? {
        switch self {
        case .int(let value): Int(exactly: value)
        case .double(let value): Int(exactly: value)
        default: nil
        }
    }

    /// The number as an `Int64`, for `.int` and for a `.double` that is a whole number in range:
    /// exact on every platform (`int` is nil on watchOS beyond 32 bits).
    public var int64: Int64? {
        switch self {
        case .int(let value): value
        case .double(let value): Int64(exactly: value)
        default: nil
        }
    }
    /// The number as a `Double`, for `.int` and `.double`.
    public var double: Double? {
        switch self {
        case .int(let value): Double(value)
        case .double(let value): value
        default: nil
        }
    }
    /// The boolean, for `.bool`.
    public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The elements, for `.array`.
    public var array: [JSON]? { if case .array(let value) = self { value } else { nil } }
    /// The members, for `.object`.
    public var object: [String: JSON]? { if case .object(let value) = self { value } else { nil } }
    /// `true` for `.null`.
    public var isNull: Bool { self == .null }

    /// The value as Foundation types (`[String: Any]`, `[Any]`, `String`, `Int`, `Double`, `Bool`,
    /// `NSNull`), for code written against `JSONSerialization`.
    public var anyValue: Any {
        switch self {
        case .null: NSNull()
        case .bool(let value): value
        case .int(let value): Int(exactly: value).map { $0 as Any } ?? value
        case .double(let value): value
        case .string(let value): value
        case .array(let value): value.map(\.anyValue)
        case .object(let value): value.mapValues(\.anyValue)
        }
    }

    /// Compact JSON text, keys sorted.
    public var description: String {
        guard JSONSerialization.isValidJSONObject([anyValue]),
            let data = try? JSONSerialization.data(withJSONObject: anyValue, options: [.sortedKeys, .fragmentsAllowed])
        else { return "\(anyValue)" }
        return String(decoding: data, as: UTF8.self)
    }
}
