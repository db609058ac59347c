import Foundation

/// A `JSON` value can be written as a literal, nested and mixed as JSON itself is:
/// `let body: JSON = ["title": "Demo", "slides": [["title": "one"]], "count": 3, "draft": false]`.
/// `null` is `.null` (a `nil` literal would be an optional's).
extension JSON: ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, ExpressibleByStringLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral, ExpressibleByBooleanLiteral
{
    /// An object; a key given twice keeps its last value.
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }

    /// An array.
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }

    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }

    /// An integer.
    public init(integerLiteral value: Int64) { self = .int(value) }

    /// A number with a fraction or an exponent.
    public init(floatLiteral value: Double) { self = .double(value) }

    /// `true` or `false`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
