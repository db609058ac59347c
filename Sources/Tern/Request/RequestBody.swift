import Foundation

/// What a request sends as its body. Build one with the static factories.
/// Thread safety: a value type, safe to share.
public struct RequestBody: Sendable {
    enum Content: Sendable {
        case form(Parameters)
        case jsonParameters(Parameters)
        case encodable(@Sendable () throws -> Data)
        case data(Data, contentType: String?)
    }

    let content: Content

    /// An `application/x-www-form-urlencoded` body, encoded with the client's `ParameterEncoding`.
    public static func form(_ parameters: Parameters) -> RequestBody {
        RequestBody(content: .form(parameters))
    }

    /// A JSON object body from a dictionary of strings, numbers, bools, arrays, nested
    /// dictionaries and `nil` / `NSNull` (sent as JSON `null`). Other values fail the request with
    /// `TernError.invalidRequest(.unencodableValue)`.
    public static func json(_ parameters: Parameters) -> RequestBody {
        RequestBody(content: .jsonParameters(parameters))
    }

    /// A JSON body from any `Encodable` value.
    /// - Parameters:
    ///   - value: The value to encode; encoding happens when the request is built.
    ///   - encoder: The encoder to use; a plain `JSONEncoder()` by default.
    public static func json<Value: Encodable & Sendable>(_ value: Value, encoder: JSONEncoder = JSONEncoder()) -> RequestBody {
        let box = UncheckedBox(encoder)
        return RequestBody(content: .encodable { try box.value.encode(value) })
    }

    /// A raw body, sent as is.
    /// - Parameters:
    ///   - data: The bytes to send.
    ///   - contentType: The `Content-Type` header to send, unless the request sets one itself.
    public static func data(_ data: Data, contentType: String? = nil) -> RequestBody {
        RequestBody(content: .data(data, contentType: contentType))
    }
}

/// Holds a Foundation coder that predates its Sendable annotation on older Apple SDKs.
// Sendable: only used for JSONEncoder / JSONDecoder, whose encode and decode calls are
// thread-safe once configured; Tern never mutates them after capture.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
