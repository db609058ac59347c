import Foundation

/// What a request sends as its body. Build one with the static factories.
/// Thread safety: a value type, safe to share.
public struct RequestBody: Sendable {
    enum Content: Sendable {
        case form(Parameters)
        case jsonParameters(Parameters)
        case encodable(@Sendable () throws -> Data)
        case data(Data, contentType: String?)
        /// Parameters in the group's or client's `bodyEncoding`, unless one is given.
        case parameters(Parameters, BodyEncoding?)
        /// A file's contents, streamed from disk.
        case file(URL, contentType: String?)
        /// A multipart form, in memory or streamed from a temporary file.
        case multipart(MultipartFormData)
        /// Bytes produced while they are sent.
        case stream(StreamedBody)
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

    /// A JSON body from a `JSON` value: `let draft: JSON = ["title": "Demo", "slides": [["title":
    /// "one"]]]`, then `.json(draft)`. An object's members are parameters, as hooks see them.
    public static func json(_ value: JSON) -> RequestBody {
        guard case .object(let members) = value else {
            return .data(Data(value.description.utf8), contentType: "application/json")
        }
        return RequestBody(content: .jsonParameters(members))
    }

    /// A JSON body from any `Encodable` value.
    /// - Parameters:
    ///   - value: The value to encode; encoding happens when the request is built.
    ///   - encoder: The encoder to use; a plain `JSONEncoder()` by default.
    public static func json<Value: Encodable & Sendable>(_ value: Value, encoder: JSONEncoder = JSONEncoder()) -> RequestBody {
        let box = UncheckedBox(encoder)
        return RequestBody(content: .encodable { try box.value.encode(value) })
    }

    /// Parameters sent in the body in the `bodyEncoding` of the request's group, else of its client
    /// (`.form` by default): a JSON API says `.json` once, in its configuration.
    /// - Parameters:
    ///   - parameters: The body parameters (the values `ParameterEncoding` documents).
    ///   - encoding: An encoding for this body only; nil uses the group's or client's.
    public static func parameters(_ parameters: Parameters, encoding: BodyEncoding? = nil) -> RequestBody {
        RequestBody(content: .parameters(parameters, encoding))
    }

    /// The body's parameters, for parameter hooks; nil when it is not made of parameters.
    var parameters: Parameters? {
        switch content {
        case .form(let parameters), .jsonParameters(let parameters), .parameters(let parameters, _): parameters
        case .encodable, .data, .file, .multipart, .stream: nil
        }
    }

    /// The same kind of body with other parameters.
    func replacingParameters(_ parameters: Parameters) -> RequestBody {
        switch content {
        case .form: .form(parameters)
        case .jsonParameters: .json(parameters)
        case .parameters(_, let encoding): .parameters(parameters, encoding: encoding)
        case .encodable, .data, .file, .multipart, .stream: self
        }
    }

    /// The contents of a file, streamed from disk with its `Content-Length` (never read into
    /// memory, never chunked); every attempt — a retry, a 307/308 redirect — sends it again. A file
    /// that is missing or unreadable fails the request with `TernError.invalidRequest(.unreadableFile)`.
    /// - Parameters:
    ///   - url: A file URL.
    ///   - contentType: The `Content-Type` to send, unless the request sets one; nil infers it
    ///     from the file's extension (`application/octet-stream` when unknown).
    public static func file(_ url: URL, contentType: String? = nil) -> RequestBody {
        RequestBody(content: .file(url, contentType: contentType))
    }

    /// A `multipart/form-data` body (see `MultipartFormData`).
    public static func multipart(_ form: MultipartFormData) -> RequestBody {
        RequestBody(content: .multipart(form))
    }

    /// A `multipart/form-data` body built in place, like AFNetworking's
    /// `constructingBodyWithBlock`:
    /// ```swift
    /// body: .multipart { form in
    ///     form.append("Beijing", name: "city")
    ///     form.append(fileAt: photoURL, name: "photo")
    /// }
    /// ```
    public static func multipart(_ build: (inout MultipartFormData) -> Void) -> RequestBody {
        var form = MultipartFormData()
        build(&form)
        return .multipart(form)
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
