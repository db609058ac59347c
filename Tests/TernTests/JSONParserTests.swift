import Foundation
import Testing
@testable import Tern

/// Tern's JSON parser against Foundation's `JSONSerialization` on the same text, and on its own.
@Suite struct JSONParserTests {
    /// A random JSON value: nested containers, strings with CJK, emoji, quotes, escapes and
    /// control characters, integers and doubles.
    static func randomValue(_ generator: inout some RandomNumberGenerator, depth: Int = 0) -> Any {
        let pieces = ["a", "北京", "😀", "\"", "\\", "/", "\n", "\t", "\u{01}", "é", " ", "\u{2028}", "𝄞"]
        switch Int.random(in: 0..<(depth > 3 ? 5 : 7), using: &generator) {
        case 0: return NSNull()
        case 1: return Bool.random(using: &generator)
        case 2: return Int.random(in: -1_000_000_000_000...1_000_000_000_000, using: &generator)
        case 3: return Double(Int.random(in: -100_000...100_000, using: &generator)) / 64 + 0.5
        case 4: return (0..<Int.random(in: 0..<8, using: &generator)).map { _ in pieces.randomElement(using: &generator)! }.joined()
        case 5: return (0..<Int.random(in: 0..<5, using: &generator)).map { _ in randomValue(&generator, depth: depth + 1) }
        default:
            var object: [String: Any] = [:]
            for index in 0..<Int.random(in: 0..<5, using: &generator) {
                object["k\(index)\(pieces.randomElement(using: &generator)!)"] = randomValue(&generator, depth: depth + 1)
            }
            return object
        }
    }

    @Test func agreesWithJSONSerializationOnRandomDocuments() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let value = Self.randomValue(&generator)
            let text = try JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed])
            let ours = try JSON(data: text)
            let foundations = try JSON(foundation: JSONSerialization.jsonObject(with: text, options: [.fragmentsAllowed]))
            #expect(ours == foundations, "\(String(decoding: text, as: UTF8.self))")
        }
    }

    @Test func numbersStringsAndEscapes() throws {
        let cases: [(String, JSON)] = [
            ("0", .int(0)), ("-0", .int(0)), ("42", .int(42)), ("-7", .int(-7)),
            ("9223372036854775807", .int(.max)), ("-9223372036854775808", .int(.min)),
            ("9223372036854775808", .double(9_223_372_036_854_775_808)), ("1.5", .double(1.5)), ("1e2", .double(100)),
            ("-2.5E-3", .double(-0.0025)), (#""a\"b\\c\/d\b\f\n\r\t""#, .string("a\"b\\c/d\u{8}\u{C}\n\r\t")),
            (#""\u00e9\u5317\ud83d\ude00""#, .string("é北😀")), (#""\ud800x""#, .string("\u{FFFD}x")),
            (" \n\t{ \"a\" : [ 1 , true , null ] } \r\n", .object(["a": .array([.int(1), .bool(true), .null])])),
            (#"{"a": 1, "a": 2}"#, .object(["a": .int(2)])), ("[]", .array([])), ("{}", .object([:])), ("\"\"", .string("")),
        ]
        for (text, expected) in cases {
            #expect(try JSON(data: Data(text.utf8)) == expected, "\(text)")
        }
    }

    @Test func invalidTextIsADecodingErrorSayingWhere() {
        let invalid = [
            "", " ", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "+1", "-", "NaN", "tru", "nul", "[1 2]",
            "{\"a\" 1}", "{1: 2}", "\"abc", "\"a\u{01}b\"", "\"\\x\"", "\"\\u12\"", "[1] x", "{\"a\":}", "1e", "1e+",
        ]
        for text in invalid {
            do {
                _ = try JSON(data: Data(text.utf8))
                Issue.record("\(text.debugDescription) should not parse")
            } catch {
                guard case .decoding(let description, let body) = error else { Issue.record("\(error)"); continue }
                #expect(description.hasPrefix("invalid JSON at byte ") && body == Data(text.utf8), "\(description)")
            }
        }
    }

    @Test func deepNestingIsRefusedNotACrash() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: TernError.self) { try JSON(data: Data(deep.utf8)) }
        let fine = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        #expect(try JSON(data: Data(fine.utf8)).array?.count == 1)
    }

    /// Integers are 64-bit on every platform, also where `Int` has 32 bits (watchOS).
    @Test func integersBeyond32BitsRoundTripExactly() throws {
        let json = try JSON(data: Data(#"{"id": 9007199254740993, "ms": 1764547200123, "neg": -4294967297}"#.utf8))
        #expect(json["id"] == .int(9_007_199_254_740_993))
        #expect(json["id"]?.int64 == 9_007_199_254_740_993)
        #expect(json["ms"]?.int64 == 1_764_547_200_123)
        #expect(json["neg"]?.int64 == -4_294_967_297)
        #expect(try JSON(foundation: json.anyValue) == json)
        #expect(JSON.int(Int64.max).int64 == .max)
        #expect(JSON.double(3.0).int64 == 3 && JSON.double(3.5).int64 == nil)
    }
}
