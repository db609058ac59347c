import Foundation
import Testing

@testable import Tern

/// Tern's `Decoder` against `JSONDecoder`: the same value or the same error for every case.
struct TapeDecoderTests {
    struct City: Codable, Equatable {
        var id: Int
        var name: String
        var population: Int64?
        var area: Double
        var tags: [String]
        var capital: Bool
        var coordinates: Coordinates?
        var neighbours: [City]?
    }

    struct Coordinates: Codable, Equatable {
        var latitude: Double
        var longitude: Float
    }

    struct Numbers: Codable, Equatable {
        var i8: Int8?
        var u8: UInt8?
        var i16: Int16?
        var u16: UInt16?
        var i32: Int32?
        var u32: UInt32?
        var i64: Int64?
        var u64: UInt64?
        var int: Int?
        var uint: UInt?
        var double: Double?
        var float: Float?
        var decimal: Decimal?
    }

    enum Weather: String, Codable, Equatable { case sunny, rainy }
    enum Level: Int, Codable, Equatable { case low = 1, high = 2 }
    enum Shape: Codable, Equatable {
        case circle(radius: Double)
        case square(side: Int, label: String?)
        case empty
    }

    struct Everything: Codable, Equatable {
        var weather: Weather
        var level: Level
        var shapes: [Shape]
        var matrix: [[Int]]
        var lookup: [String: [Int]]
        var byNumber: [Int: String]
        var url: URL
        var maybe: String??
    }

    @Test(arguments: [
        #"{"id": 1, "name": "北京", "area": 16410.54, "tags": ["capital", "old"], "capital": true}"#,
        #"{"id": 1, "name": "Beijing", "population": 21540000, "area": 1e4, "tags": [], "capital": false, "coordinates": {"latitude": 39.9, "longitude": 116.4}}"#,
        #"{"id": 1, "name": "a", "area": 1, "tags": [], "capital": false, "neighbours": [{"id": 2, "name": "b", "area": 2, "tags": ["x"], "capital": true, "neighbours": null}]}"#,
        #"{"id": 1, "name": "dup", "name": "last", "area": 0, "tags": [], "capital": true, "unknown": {"deep": [1, 2, {"x": null}]}}"#,
        #"{"id": 1, "name": "esc \"q\" \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00 \ud800 end", "area": -0.0, "tags": ["\u4e2d"], "capital": true}"#,
        // Missing keys, nulls where values belong, wrong types, at several depths.
        #"{"name": "x", "area": 1, "tags": [], "capital": true}"#,
        #"{"id": null, "name": "x", "area": 1, "tags": [], "capital": true}"#,
        #"{"id": "1", "name": "x", "area": 1, "tags": [], "capital": true}"#,
        #"{"id": 1, "name": 5, "area": 1, "tags": [], "capital": true}"#,
        #"{"id": 1, "name": "x", "area": "1", "tags": [], "capital": true}"#,
        #"{"id": 1, "name": "x", "area": 1, "tags": [1], "capital": true}"#,
        #"{"id": 1, "name": "x", "area": 1, "tags": ["a", null], "capital": true}"#,
        #"{"id": 1, "name": "x", "area": 1, "tags": {}, "capital": true}"#,
        #"{"id": 1, "name": "x", "area": 1, "tags": null, "capital": true}"#,
        #"{"id": 1, "name": "x", "area": 1, "tags": [], "capital": 1}"#,
        #"{"id": 1, "name": "x", "area": 1, "tags": [], "capital": true, "coordinates": {"latitude": 1}}"#,
        #"{"id": 1, "name": "x", "area": 1, "tags": [], "capital": true, "coordinates": []}"#,
        #"{"id": 1, "name": "x", "area": 1, "tags": [], "capital": true, "neighbours": [{"id": 2}]}"#,
        #"{"id": 1.0, "name": "x", "area": 1, "tags": [], "capital": true}"#,
        #"{"id": 1.5, "name": "x", "area": 1, "tags": [], "capital": true}"#,
        #"[]"#, #"null"#, #"3"#, #""city""#,
        // Not JSON.
        #"{"id": 1,}"#, #"{"id": 01}"#, #""#, #"{"id": 1} x"#, #"[1, 2"#, #"{"id": 1, "name": "\ud800"}"#,
    ])
    func citiesDecodeAlike(json: String) {
        expectSameDecoding(City.self, json)
        expectSameDecoding([City].self, "[\(json)]")
    }

    @Test(arguments: [
        #"{"i8": -128, "u8": 255, "i16": -32768, "u16": 65535, "i32": -2147483648, "u32": 4294967295}"#,
        #"{"i64": -9223372036854775808, "u64": 18446744073709551615, "int": 9223372036854775807, "uint": 0}"#,
        #"{"i8": 128}"#, #"{"u8": -1}"#, #"{"u8": 256}"#, #"{"u64": 18446744073709551616}"#, #"{"i64": 9223372036854775808}"#,
        #"{"int": 1e3}"#, #"{"int": 1E+2}"#, #"{"int": 2.0}"#, #"{"int": 2.5}"#, #"{"int": -0}"#, #"{"uint": -0}"#, #"{"int": 1e300}"#,
        #"{"double": 1.7976931348623157e308}"#, #"{"double": 5e-324}"#, #"{"double": 1e400}"#, #"{"double": -1e-400}"#,
        #"{"double": 123456789012345678901234567890}"#, #"{"double": 0.1}"#, #"{"double": 3}"#, #"{"double": -0}"#,
        #"{"float": 3.4028235e38}"#, #"{"float": 3.5e38}"#, #"{"float": 1e-50}"#, #"{"float": 0.1}"#,
        #"{"decimal": 12345678901234567890.123456789}"#, #"{"decimal": -1e-5}"#, #"{"decimal": "1"}"#,
        #"{"double": "1.5"}"#, #"{"double": true}"#, #"{"int": "1"}"#, #"{"int": null}"#, #"{"int": []}"#,
    ])
    func numbersDecodeAlike(json: String) {
        expectSameDecoding(Numbers.self, json)
    }

    @Test(arguments: [
        #"{"weather": "sunny", "level": 2, "shapes": [{"circle": {"radius": 2.5}}, {"square": {"side": 3, "label": null}}, {"empty": {}}], "matrix": [[1], [], [2, 3]], "lookup": {"a": [1], "b_c": []}, "byNumber": {"1": "one", "20": "twenty"}, "url": "https://example.com/a?b=c", "maybe": null}"#,
        #"{"weather": "cloudy", "level": 2, "shapes": [], "matrix": [], "lookup": {}, "byNumber": {}, "url": "https://x"}"#,
        #"{"weather": "sunny", "level": 3, "shapes": [], "matrix": [], "lookup": {}, "byNumber": {}, "url": "https://x"}"#,
        #"{"weather": "sunny", "level": 1, "shapes": [{"triangle": {}}], "matrix": [], "lookup": {}, "byNumber": {}, "url": "https://x"}"#,
        #"{"weather": "sunny", "level": 1, "shapes": [{"circle": {}}], "matrix": [], "lookup": {}, "byNumber": {}, "url": "https://x"}"#,
        #"{"weather": "sunny", "level": 1, "shapes": [], "matrix": [[1, "2"]], "lookup": {}, "byNumber": {}, "url": "https://x"}"#,
        #"{"weather": "sunny", "level": 1, "shapes": [], "matrix": [], "lookup": {"a": [null]}, "byNumber": {}, "url": "https://x"}"#,
        #"{"weather": "sunny", "level": 1, "shapes": [], "matrix": [], "lookup": {}, "byNumber": {"one": "1"}, "url": "https://x"}"#,
        #"{"weather": "sunny", "level": 1, "shapes": [], "matrix": [], "lookup": {}, "byNumber": {}, "url": ""}"#,
        #"{"weather": "sunny", "level": 1, "shapes": [], "matrix": [], "lookup": {}, "byNumber": {}, "url": "https://x", "maybe": "yes"}"#,
    ])
    func enumsCollectionsAndOptionalsDecodeAlike(json: String) {
        expectSameDecoding(Everything.self, json)
    }

    struct Dated: Codable, Equatable {
        var when: Date
        var blob: Data?
    }

    @Test(arguments: [
        #"{"when": 0}"#, #"{"when": 1700000000.5}"#, #"{"when": "2024-05-06T07:08:09Z"}"#, #"{"when": "2024-05-06T07:08:09+08:00"}"#,
        #"{"when": "yesterday"}"#, #"{"when": null}"#, #"{"when": 1, "blob": "aGVsbG8="}"#, #"{"when": 1, "blob": "not base64!"}"#,
        #"{"when": 1, "blob": [104, 105]}"#, #"{"when": 1, "blob": [256]}"#,
    ])
    func datesAndDataDecodeAlikeUnderEveryStrategy(json: String) {
        expectSameDecoding(Dated.self, json)
        expectSameDecoding(Dated.self, json) { $0.dateDecodingStrategy = .secondsSince1970 }
        expectSameDecoding(Dated.self, json) { $0.dateDecodingStrategy = .millisecondsSince1970 }
        expectSameDecoding(Dated.self, json) {
            $0.dateDecodingStrategy = .iso8601
            $0.dataDecodingStrategy = .base64
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ssZZZZZ"
        let strategy = JSONDecoder.DateDecodingStrategy.formatted(formatter)  // available: a date strategy
        expectSameDecoding(Dated.self, json) { $0.dateDecodingStrategy = strategy }
        expectSameDecoding(Dated.self, json) {
            $0.dateDecodingStrategy = .custom { decoder in
                let container = try decoder.singleValueContainer()
                if let seconds = try? container.decode(Double.self) { return Date(timeIntervalSince1970: seconds * 2) }
                throw DecodingError.dataCorruptedError(in: container, debugDescription: "custom")
            }
            $0.dataDecodingStrategy = .custom { decoder in Data(try decoder.singleValueContainer().decode(String.self).utf8.reversed()) }
        }
    }

    struct SnakeCase: Codable, Equatable {
        var userID: Int?
        var userId: Int?
        var firstName: String?
        var _private: Int?
        var trailing_: Int?
        var url: String?
        var nested: [String: Int]?
    }

    @Test(arguments: [
        #"{"user_id": 1, "first_name": "a", "_private": 2, "trailing_": 3, "url": "u", "nested": {"keep_this": 1}}"#,
        #"{"user_ID": 1, "FIRST_NAME": "b", "__private": 4, "first__name": "c", "userId": 5}"#,
        #"{"user_id": "wrong"}"#, #"{"nested": {"a_b": "x"}}"#,
    ])
    func keyStrategiesDecodeAlike(json: String) {
        expectSameDecoding(SnakeCase.self, json)
        expectSameDecoding(SnakeCase.self, json) { $0.keyDecodingStrategy = .convertFromSnakeCase }
        expectSameDecoding(SnakeCase.self, json) {
            $0.keyDecodingStrategy = .custom { path in
                let last = path.last!
                return AnyKey(
                    stringValue: last.stringValue.replacingOccurrences(of: "_", with: "").lowercased() == "userid"
                        ? "userId" : last.stringValue)
            }
        }
    }

    /// -0 keeps its sign, as JSONDecoder keeps it (`==` cannot tell).
    @Test func negativeZeroKeepsItsSign() throws {
        struct Value: Decodable { var value: Double }
        for json in [#"{"value": -0}"#, #"{"value": -0.0}"#, #"{"value": 0}"#] {
            let data = Data(json.utf8)
            let expected = try JSONDecoder().decode(Value.self, from: data).value
            let actual = try TapeDecoder.decode(Value.self, from: data, options: DecodingOptions(JSONDecoder())!).value
            #expect(actual.sign == expected.sign && actual == expected, "\(json)")
        }
    }

    @Test(arguments: [#"{"value": "NaN"}"#, #"{"value": "+Infinity"}"#, #"{"value": "-Infinity"}"#, #"{"value": "nan"}"#, #"{"value": 1}"#])
    func nonConformingFloatsDecodeAlike(json: String) {
        struct Value: Codable, Equatable {
            var value: Double
            static func == (lhs: Value, rhs: Value) -> Bool { lhs.value == rhs.value || (lhs.value.isNaN && rhs.value.isNaN) }
        }
        expectSameDecoding(Value.self, json)
        expectSameDecoding(Value.self, json) {
            $0.nonConformingFloatDecodingStrategy = .convertFromString(
                positiveInfinity: "+Infinity", negativeInfinity: "-Infinity", nan: "NaN")
        }
    }

    /// The one difference: an invalid escape fails up front as invalid JSON, where JSONDecoder
    /// reports it only when the string is read (and another error first when the type is wrong).
    @Test func anInvalidEscapeIsInvalidJSONWhateverTheType() {
        let data = Data(#"{"id": "\x"}"#.utf8)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode([String: String].self, from: data) }
        do {
            _ = try TapeDecoder.decode(City.self, from: data, options: DecodingOptions(JSONDecoder())!)
            Issue.record("decoded an invalid escape")
        } catch {
            #expect(
                DecodingErrorShape(error) == DecodingErrorShape(DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: ""))))
        }
    }
}
