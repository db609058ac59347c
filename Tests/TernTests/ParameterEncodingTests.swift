import Foundation
import Testing
@testable import Tern

@Suite struct ParameterEncodingTests {
    /// Splits an encoded query back into decoded pairs, the way a server does (no `+` → space).
    static func decode(_ query: String) -> [(String, String)] {
        query.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            return (String(parts[0]).removingPercentEncoding!, parts.count > 1 ? String(parts[1]).removingPercentEncoding! : "")
        }
    }

    @Test func reservedCharactersCJKAndEmojiAreEscapedInValues() throws {
        let query = try ParameterEncoding.default.encode(["q": "a+b&c=d#e?f/g h", "city": "北京", "mood": "☀️🌧"])
        #expect(query == "city=%E5%8C%97%E4%BA%AC&mood=%E2%98%80%EF%B8%8F%F0%9F%8C%A7&q=a%2Bb%26c%3Dd%23e%3Ff%2Fg%20h")
    }

    @Test func keysAreSortedAndArraysKeepTheirOrder() throws {
        let query = try ParameterEncoding.default.encode(["z": 1, "a": ["3", "1", "2"], "m": true])
        #expect(query == "a%5B%5D=3&a%5B%5D=1&a%5B%5D=2&m=true&z=1")
    }

    @Test func arrayStylesAndBoolStyles() throws {
        let repeated = ParameterEncoding(arrays: .repeatedKey, bools: .numeric)
        #expect(try repeated.encode(["t": ["x", "y"], "b": false]) == "b=0&t=x&t=y")
        let indexed = ParameterEncoding(arrays: .indexed)
        let pairs = Self.decode(try indexed.encode(["t": Array(0..<12).map(String.init)]))
        #expect(pairs.map(\.0) == (0..<12).map { "t[\($0)]" })
    }

    @Test func nestedDictionariesNilAndNull() throws {
        let optionalNone: String? = nil
        let optionalSome: String? = "yes"
        let query = try ParameterEncoding.default.encode([
            "filter": ["min": 1, "max": 9.5] as [String: any Sendable], "gone": optionalNone, "here": optionalSome, "blank": NSNull(),
        ])
        #expect(Self.decode(query).map { "\($0.0)=\($0.1)" } == ["blank=", "filter[max]=9.5", "filter[min]=1", "here=yes"])
    }

    @Test func foundationNumbersKeepTheirKind() throws {
        let query = try ParameterEncoding.default.encode(["b": NSNumber(value: true), "i": NSNumber(value: 1), "d": NSNumber(value: 2.5)])
        #expect(query == "b=true&d=2.5&i=1")
    }

    @Test func unencodableValueIsATypedError() {
        struct Opaque: Sendable {}
        #expect(throws: TernError.self) { try ParameterEncoding.default.encode(["x": Opaque()]) }
        do {
            _ = try ParameterEncoding.default.encode(["outer": ["inner": Opaque()]])
            Issue.record("expected an error")
        } catch {
            guard case .invalidRequest(.unencodableValue(let key, _)) = error else { Issue.record("wrong error \(error)"); return }
            #expect(key == "outer[inner]")
        }
    }

    /// Property: any Unicode keys and values, reserved characters included, decode back to the same pairs.
    @Test func randomUnicodePairsRoundTrip() throws {
        var generator = SeededGenerator(seed: 0x7E27)
        let alphabet: [Character] = Array("aZ09-._~ +&=#?/%[]!$'()*,;:@\"<>\\^`{|}\t\n北京市🌧☀️é\u{301}\u{0}ß")
        for _ in 0..<500 {
            var parameters: Parameters = [:]
            var expected: [String: String] = [:]
            for _ in 0..<Int.random(in: 1...5, using: &generator) {
                let key = String((0..<Int.random(in: 1...8, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
                guard !key.contains("[") else { continue }
                let value = String((0..<Int.random(in: 0...12, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
                parameters[key] = value
                expected[key] = value
            }
            let decoded = Self.decode(try ParameterEncoding.default.encode(parameters))
            #expect(Dictionary(uniqueKeysWithValues: decoded) == expected)
            #expect(decoded.map(\.0) == decoded.map(\.0).sorted())
        }
    }
}

/// A small deterministic generator (SplitMix64) so property tests are repeatable.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
