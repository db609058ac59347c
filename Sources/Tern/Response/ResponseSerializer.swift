import Foundation

/// Turns a validated body into the value a request asked for. Runs off the main thread.
///
/// Built-ins: `.data`, `.string()`, `.json`, `.json(fallbackToString:)` and `.decodable(_:decoder:)`.
/// An empty body on a 204 or 205 response or a HEAD request is not an error: `.data` gives empty
/// data, `.string()` an empty string, `.json` `.null`, and `.decodable` the type's `emptyValue` if
/// it conforms to `EmptyRepresentable` (like `Empty` and `Optional`).
/// Thread safety: immutable, safe to share.
public struct ResponseSerializer<Value: Sendable>: Sendable {
    /// The content types this serializer expects when validation does not name its own; nil accepts any.
    public let acceptableContentTypes: Set<String>?
    let emptyValue: Value?
    /// Makes the value; Tern's own serializers read the head, a custom one gets Foundation's response.
    let serialize: @Sendable (Data, ResponseHead) throws(TernError) -> Value
    /// Whose code decodes: Tern's own, `JSONDecoder`, or the caller's (see `ProcessStage.swift`).
    let kind: Kind
    /// For a `Decodable` serializer made without a decoder: the same serializer with the decoder
    /// of the request's group or client (`ClientConfiguration.decoder`), when one is set.
    let withDecoder: (@Sendable (UncheckedBox<JSONDecoder>) -> ResponseSerializer<Value>)?

    /// Whose code a serializer runs, for deciding where it runs.
    enum Kind: Sendable {
        case builtIn, decodable, custom
    }

    /// A custom serializer.
    /// - Parameters:
    ///   - acceptableContentTypes: Content types it expects, or nil for any.
    ///   - emptyValue: What an empty 204/205/HEAD body becomes; nil makes it a decoding error.
    ///   - serialize: Makes the value from the body and the response; throw `TernError.decoding`.
    public init(
        acceptableContentTypes: Set<String>?,
        emptyValue: Value?,
        serialize: @escaping @Sendable (Data, HTTPURLResponse) throws(TernError) -> Value
    ) {
        self.init(acceptableContentTypes: acceptableContentTypes, emptyValue: emptyValue, kind: .custom) { data, head throws(TernError) in
            try serialize(data, head.httpResponse)
        }
    }

    init(
        acceptableContentTypes: Set<String>?, emptyValue: Value?, kind: Kind,
        withDecoder: (@Sendable (UncheckedBox<JSONDecoder>) -> ResponseSerializer<Value>)? = nil,
        serialize: @escaping @Sendable (Data, ResponseHead) throws(TernError) -> Value
    ) {
        self.acceptableContentTypes = acceptableContentTypes
        self.emptyValue = emptyValue
        self.serialize = serialize
        self.kind = kind
        self.withDecoder = withDecoder
    }

    /// This serializer, decoding with `decoder` when it is a `Decodable` one made without a decoder.
    func using(_ decoder: UncheckedBox<JSONDecoder>?) -> ResponseSerializer<Value> {
        guard let decoder, let withDecoder else { return self }
        return withDecoder(decoder)
    }

    /// Makes the value for one response, treating intentionally empty bodies as documented above.
    func value(from data: Data, head response: ResponseHead, method: HTTPMethod) throws(TernError) -> Value {
        if data.isEmpty, method == .head || response.statusCode == 204 || response.statusCode == 205 {
            guard let emptyValue else {
                throw .decoding(
                    description: "empty body (status \(response.statusCode), \(method)) and \(Value.self) has no empty value", body: data)
            }
            return emptyValue
        }
        return try serialize(data, response)
    }
}

/// The MIME types the JSON serializers accept.
let jsonContentTypes: Set<String> = ["application/json", "text/json", "text/javascript", "application/*+json"]

extension ResponseSerializer where Value == Data {
    /// The body as is.
    public static var data: ResponseSerializer<Data> {
        ResponseSerializer(acceptableContentTypes: nil, emptyValue: Data(), kind: .builtIn) { data, _ in data }
    }
}

extension ResponseSerializer where Value == String {
    /// The body as text in the response's charset, or `defaultEncoding` (UTF-8) when it names none.
    /// - Parameter defaultEncoding: Used when the response has no known charset.
    public static func string(defaultEncoding: String.Encoding = .utf8) -> ResponseSerializer<String> {
        ResponseSerializer(acceptableContentTypes: nil, emptyValue: "", kind: .builtIn) { data, response throws(TernError) in
            let encoding = String.Encoding(of: response) ?? defaultEncoding
            guard let text = String(data: data, encoding: encoding) else {
                throw .decoding(description: "body is not valid \(encoding)", body: data)
            }
            return text
        }
    }
}

extension ResponseSerializer where Value == JSON {
    /// Untyped JSON; expects a JSON content type.
    public static var json: ResponseSerializer<JSON> { json(fallbackToString: false) }

    /// Untyped JSON, optionally falling back to the body as text.
    /// - Parameter fallbackToString: When true, a body that is not JSON (or not labelled as JSON)
    ///   becomes `.string(body)` instead of an error, as an AFNetworking-style `HTTPRequestManager` does.
    public static func json(fallbackToString: Bool) -> ResponseSerializer<JSON> {
        ResponseSerializer(
            acceptableContentTypes: fallbackToString ? nil : jsonContentTypes, emptyValue: .null,
            kind: .builtIn
        ) { data, response throws(TernError) in
            do throws(TernError) {
                return try JSON(data: data)
            } catch {
                guard fallbackToString else { throw error }
                let encoding = String.Encoding(of: response) ?? .utf8
                return .string(String(data: data, encoding: encoding) ?? String(decoding: data, as: UTF8.self))
            }
        }
    }
}

extension ResponseSerializer where Value: Decodable {
    /// A `Decodable` value decoded from JSON; expects a JSON content type.
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - decoder: The decoder, whatever the group's or client's.
    public static func decodable(_ type: Value.Type = Value.self, decoder: JSONDecoder) -> ResponseSerializer<Value> {
        decodable(with: UncheckedBox(decoder), replaceable: false)
    }

    /// A `Decodable` value decoded from JSON with the decoder of the request's group or client
    /// (`ClientConfiguration.decoder`), else a plain `JSONDecoder()`; expects a JSON content type.
    /// - Parameter type: The type to decode.
    public static func decodable(_ type: Value.Type = Value.self) -> ResponseSerializer<Value> {
        decodable(with: plainDecoder, replaceable: true)
    }

    private static func decodable(with box: UncheckedBox<JSONDecoder>, replaceable: Bool) -> ResponseSerializer<Value> {
        let replace: (@Sendable (UncheckedBox<JSONDecoder>) -> ResponseSerializer<Value>)?
        if replaceable {
            replace = { (other: UncheckedBox<JSONDecoder>) -> ResponseSerializer<Value> in decodable(with: other, replaceable: false) }
        } else {
            replace = nil
        }
        let serialize: @Sendable (Data, ResponseHead) throws(TernError) -> Value = { data, _ throws(TernError) in
            do {
                return try ResponseDecoding.decode(Value.self, from: data, like: box.value)
            } catch {
                throw .decoding(description: String(describing: error), body: data)
            }
        }
        return ResponseSerializer(
            acceptableContentTypes: jsonContentTypes,
            emptyValue: (Value.self as? any EmptyRepresentable.Type)?.emptyValue as? Value,
            kind: .decodable, withDecoder: replace, serialize: serialize)
    }
}

/// The decoder of `Decodable` requests when neither they, their group nor their client name one.
private let plainDecoder = UncheckedBox(JSONDecoder())

/// A type with a value that stands for "no body", so a 204 or HEAD response decodes to it.
/// Thread safety: `emptyValue` is read from the transport's thread; return a fresh value.
public protocol EmptyRepresentable {
    /// The value an empty body becomes.
    static var emptyValue: Self { get }
}

/// The response type for endpoints that answer with no body you care about.
/// Thread safety: a value type, safe to share.
public struct Empty: Codable, Sendable, Hashable, EmptyRepresentable {
    /// Creates the empty value.
    public init() {}
    /// `Empty()`.
    public static var emptyValue: Empty { Empty() }
}

extension Optional: EmptyRepresentable {
    /// `nil`.
    public static var emptyValue: Optional<Wrapped> { nil }
}

extension String.Encoding {
    /// The encoding named by the response's `charset`, if it names one Foundation has.
    init?(of response: ResponseHead) {
        guard let name = response.textEncodingName else { return nil }
        self.init(ianaCharset: name)
    }

    /// The encoding an IANA charset name (`utf-8`, `iso-8859-1`, …) stands for, if Foundation has it.
    init?(ianaCharset name: String) {
        switch name.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "\" ")) {
        case "utf-8", "utf8": self = .utf8
        case "utf-16": self = .utf16
        case "utf-16le": self = .utf16LittleEndian
        case "utf-16be": self = .utf16BigEndian
        case "utf-32": self = .utf32
        case "us-ascii", "ascii": self = .ascii
        case "iso-8859-1", "latin1", "iso_8859-1": self = .isoLatin1
        case "iso-8859-2": self = .isoLatin2
        case "windows-1252", "cp1252": self = .windowsCP1252
        case "windows-1251": self = .windowsCP1251
        case "shift_jis", "shift-jis": self = .shiftJIS
        case "euc-jp": self = .japaneseEUC
        default: return nil
        }
    }
}
