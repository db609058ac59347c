import Foundation
import Testing

@testable import Tern

/// Hand-written `init(from:)`s: containers, nesting, `superDecoder`, `allKeys`, `userInfo`, and
/// the errors each step throws, against `JSONDecoder`.
struct TapeDecoderContainerTests {
    class Animal: Decodable, Equatable {
        let name: String
        enum Keys: String, CodingKey { case name }
        required init(from decoder: any Decoder) throws {
            name = try decoder.container(keyedBy: Keys.self).decode(String.self, forKey: .name)
        }
        static func == (lhs: Animal, rhs: Animal) -> Bool { lhs.name == rhs.name && type(of: lhs) == type(of: rhs) }
    }

    final class Dog: Animal {
        let breed: String
        let parent: String?
        enum DogKeys: String, CodingKey { case breed, base, parent }
        required init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: DogKeys.self)
            breed = try container.decode(String.self, forKey: .breed)
            let parentDecoder = try container.superDecoder(forKey: .parent)
            parent =
                try parentDecoder.singleValueContainer().decodeNil() ? nil : try parentDecoder.singleValueContainer().decode(String.self)
            try super.init(from: container.superDecoder(forKey: .base))
        }
        static func == (lhs: Dog, rhs: Dog) -> Bool { lhs.name == rhs.name && lhs.breed == rhs.breed && lhs.parent == rhs.parent }
    }

    struct PlainSuper: Decodable, Equatable {
        var name: String
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Animal.Keys.self)
            name = try Animal(from: container.superDecoder()).name
        }
    }

    /// Reads an array by hand: a count, nils, mixed types, nested containers, reading past the end.
    struct Mixed: Decodable, Equatable {
        var count: Int?
        var values: [String]
        init(from decoder: any Decoder) throws {
            var container = try decoder.unkeyedContainer()
            count = container.count
            values = []
            while !container.isAtEnd {
                if try container.decodeNil() {
                    values.append("nil@\(container.currentIndex)")
                } else if let number = try? container.decode(Int.self) {
                    values.append("int \(number)")
                } else if let text = try? container.decode(String.self) {
                    values.append("text \(text)")
                } else if var nested = try? container.nestedUnkeyedContainer() {
                    values.append("array of \(nested.count ?? -1): \(try nested.decode(Bool.self))")
                } else {
                    let object = try container.nestedContainer(keyedBy: AnyKey.self)
                    values.append("object \(object.allKeys.map(\.stringValue).sorted()) \(object.contains(AnyKey(stringValue: "a")))")
                }
            }
            values.append("end \(container.currentIndex)")
            if values.count > 3 { _ = try container.decode(Int.self) }
        }
    }

    /// Nested keyed containers, nested unkeyed ones, and their errors.
    struct Envelope: Decodable, Equatable {
        var code: Int
        var city: String
        var first: Double
        var info: String
        enum Keys: String, CodingKey { case code, data, info }
        enum DataKeys: String, CodingKey { case city, points }
        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Keys.self)
            code = try container.decode(Int.self, forKey: .code)
            let data = try container.nestedContainer(keyedBy: DataKeys.self, forKey: .data)
            city = try data.decode(String.self, forKey: .city)
            var points = try data.nestedUnkeyedContainer(forKey: .points)
            first = try points.decode(Double.self)
            info = decoder.userInfo[CodingUserInfoKey(rawValue: "info")!] as? String ?? "none"
        }
    }

    @Test(arguments: [
        #"{"breed": "corgi", "base": {"name": "Rex"}}"#, #"{"breed": "corgi", "base": {"name": "Rex"}, "parent": "Max"}"#,
        #"{"breed": "corgi"}"#, #"{"breed": "corgi", "base": null}"#, #"{"breed": "corgi", "base": []}"#,
        #"{"breed": "corgi", "base": {}}"#,
    ])
    func superDecodersDecodeAlike(json: String) {
        expectSameDecoding(Dog.self, json)
        expectSameDecoding(PlainSuper.self, json.replacingOccurrences(of: "base", with: "super"))
    }

    @Test(arguments: [
        #"[1, null, "two", [true], {"a": 1, "b": 2}]"#, #"[]"#, #"[null, null]"#, #"[[1]]"#, #"[1, 2, 3, 4]"#, #"{}"#, #"null"#, #"5"#,
    ])
    func unkeyedContainersDecodeAlike(json: String) {
        expectSameDecoding(Mixed.self, json)
    }

    @Test(arguments: [
        #"{"code": 0, "data": {"city": "成都", "points": [1.5, 2]}}"#, #"{"code": 0, "data": {"city": "x", "points": []}}"#,
        #"{"code": 0, "data": {"city": "x"}}"#, #"{"code": 0}"#, #"{"code": 0, "data": null}"#, #"{"code": 0, "data": [1]}"#,
        #"{"code": 0, "data": {"city": "x", "points": {"a": 1}}}"#, #"{"code": 0, "data": {"city": "x", "points": null}}"#,
        #"{"code": 0, "data": {"city": null, "points": [1]}}"#, #"{"code": 0, "data": {"city": "x", "points": ["1"]}}"#,
    ])
    func nestedContainersDecodeAlike(json: String) {
        expectSameDecoding(Envelope.self, json)
        expectSameDecoding(Envelope.self, json) { $0.userInfo[CodingUserInfoKey(rawValue: "info")!] = "from userInfo" }
        expectSameDecoding([String: Envelope].self, #"{"first": \#(json)}"#)
    }

    @Test func topLevelFragmentsDecodeAlike() {
        expectSameDecoding(String.self, #""北京""#)
        expectSameDecoding(Int.self, "42")
        expectSameDecoding(Bool.self, "true")
        expectSameDecoding(Double.self, "null")
        expectSameDecoding(String?.self, "null")
        expectSameDecoding([Int?].self, "[1, null, 3]")
        expectSameDecoding([[String: Int]].self, #"[{"a": 1}, {}]"#)
        expectSameDecoding(Int.self, #"  7  "#)
    }

    @Test func settingsOnlyJSONDecoderFollowsAreLeftToIt() {
        let decoder = JSONDecoder()
        #expect(DecodingOptions(decoder) != nil)
        // JSON5 and a top-level dictionary without braces arrived in macOS 12 / iOS 15.
        guard #available(macOS 12.0, iOS 15.0, tvOS 15.0, watchOS 8.0, *) else { return }
        decoder.allowsJSON5 = true  // available: the guard above
        #expect(DecodingOptions(decoder) == nil)
        let other = JSONDecoder()
        other.assumesTopLevelDictionary = true  // available: the guard above
        #expect(DecodingOptions(other) == nil)
    }
}
