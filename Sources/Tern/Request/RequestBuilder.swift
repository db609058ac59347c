import Foundation

/// What a request is built with: its client's configuration with its group's settings over it.
/// Read once per request; without a group every value is the client's, read in place.
struct RequestSettings: Sendable {
    private let client: Client
    private let snapshot: APIGroup.Snapshot?

    /// The settings of `client`, with `group`'s where it has them.
    init(_ client: Client, group: APIGroup.Snapshot?) {
        self.client = client
        self.snapshot = group
    }

    var baseURL: String? { snapshot?.settings.baseURL ?? client.configuration.baseURL }
    var headers: [String: String] {
        guard let headers = snapshot?.settings.headers, !headers.isEmpty else { return client.configuration.headers }
        return client.configuration.headers.merging(headers) { _, group in group }
    }
    var parameterEncoding: ParameterEncoding { snapshot?.settings.parameterEncoding ?? client.configuration.parameterEncoding }
    var bodyEncoding: BodyEncoding { snapshot?.settings.bodyEncoding ?? client.configuration.bodyEncoding }
    var timeout: TimeInterval { snapshot?.settings.timeout ?? client.configuration.timeout }
    var deadline: TimeInterval { snapshot?.settings.deadline ?? client.configuration.deadline ?? .infinity }
    var validation: ResponseValidation { snapshot?.settings.validation ?? client.configuration.validation }
    var retryPolicy: RetryPolicy { snapshot?.settings.retryPolicy ?? client.configuration.retryPolicy }
    var cachePolicy: CachePolicy { snapshot?.settings.cachePolicy ?? client.configuration.cachePolicy }
    var decoder: UncheckedBox<JSONDecoder>? { snapshot?.settings.boxedDecoder ?? client.configuration.boxedDecoder }
    var tags: Set<String> { snapshot?.settings.tags ?? [] }
    var hooks: Hooks? { snapshot?.settings.hooks }
    var requestCompression: RequestCompression? { snapshot?.settings.requestCompression }
    /// The client's wire headers when its transport does not send them itself (a stub, a custom
    /// transport): then every request carries them, as the wire would; nil otherwise.
    var bridgeHeaders: [String: String]? { client.transport.sendsWireHeaders ? nil : client.configuration.transportSettings.wireHeaders }
}

/// Builds the `URLRequest` for a `Request` under its settings, running the parameter and URL
/// hooks, or says exactly why it cannot be built.
enum RequestBuilder {
    /// The `URLRequest` of `request` as `client` (and its group) would send it, hooks included.
    static func makeURLRequest<Value>(_ request: Request<Value>, client: Client) throws(TernError) -> URLRequest {
        let options = CallOptions(request, client: client)
        return try prepare(request, options: options, hooks: HookChain(request: request, settings: options.settings, client: client))
            .urlRequest
    }

    /// The `URLRequest` of `request`, and where its body comes from when it is not in memory (a
    /// file, or a multipart form over its memory threshold).
    static func prepare<Value>(
        _ request: Request<Value>, options: CallOptions, hooks: HookChain?
    )
        throws(TernError) -> (urlRequest: URLRequest, upload: RequestBodySource?)
    {
        let parts = try parts(request, options: options, hooks: hooks)
        var urlRequest = URLRequest(url: parts.url)
        // GET is URLRequest's default; Foundation's setter normalises the name (a microsecond or two).
        if request.method != .get { urlRequest.httpMethod = request.method.rawValue }
        urlRequest.timeoutInterval = options.timeout
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        for (name, value) in parts.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if let body = parts.body { urlRequest.httpBody = body }
        if let length = parts.upload?.length { urlRequest.setValue(String(length), forHTTPHeaderField: "Content-Length") }
        if let contentType = parts.contentType { urlRequest.setValue(contentType, forHTTPHeaderField: "Content-Type") }
        return (urlRequest, parts.upload)
    }

    /// A request built, before it becomes a `URLRequest`: what `prepare` turns into one, and
    /// what an outbox stores.
    struct Parts {
        var url: URL
        /// The client's, group's and request's headers, each checked.
        var headers: [String: String]
        /// The body when it is in memory.
        var body: Data?
        /// Where the body comes from when it is not in memory.
        var upload: RequestBodySource?
        /// The body's `Content-Type`, when no header gives one.
        var contentType: String?
    }

    /// `request` built under its settings, hooks included, without a `URLRequest`.
    static func parts<Value>(_ request: Request<Value>, options: CallOptions, hooks: HookChain?) throws(TernError) -> Parts {
        let settings = options.settings
        try SettingCheck.check(request, timeout: options.timeout, deadline: options.deadline)
        var query = request.query
        var body = request.body
        if let hooks, !hooks.parameterRewriters.isEmpty, !request.isPrebuilt {
            (query, body) = try rewriteParameters(request, with: hooks.parameterRewriters)
        }
        var url = try URLBuilder.makeURL(request.url, baseURL: settings.baseURL, parameters: query, encoding: settings.parameterEncoding)
        if let hooks, !hooks.urlRewriters.isEmpty, !request.isPrebuilt {
            url = try rewriteURL(url, with: hooks.urlRewriters)
        }
        var common = settings.headers
        if let bridge = settings.bridgeHeaders { common = bridge.merging(common) { _, own in own } }
        let headers = request.headers.isEmpty ? common : common.merging(request.headers) { _, own in own }
        for (name, value) in headers { try validateHeader(name: name, value: value) }
        var parts = Parts(url: url, headers: headers)
        guard let body else { return parts }
        guard request.method.allowsBody else { throw .invalidRequest(.bodyNotAllowed(method: request.method.rawValue)) }
        switch try encode(body, settings: settings) {
        case .data(let data, let type):
            parts.body = data
            parts.contentType = type
        case .upload(let source, let type):
            parts.upload = source
            parts.contentType = type
        }
        if parts.contentType != nil, headers.headerValue(named: "Content-Type") != nil { parts.contentType = nil }
        if let compression = request.compression ?? settings.requestCompression {
            try compress(&parts, with: compression)
        }
        return parts
    }

    /// Compresses a body in memory and names its coding; a request that names one itself is
    /// taken to be encoded already.
    private static func compress(_ parts: inout Parts, with compression: RequestCompression) throws(TernError) {
        guard parts.headers.headerValue(named: "Content-Encoding") == nil else { return }
        guard parts.upload == nil else {
            throw .invalidRequest(
                .invalidValue(
                    name: "compression",
                    reason: "a body streamed from a file, a large multipart form or a producer is not compressed: compress it, then send it"
                ))
        }
        guard let body = parts.body else { return }
        parts.body = try compression.compress(body)
        parts.headers["Content-Encoding"] = compression.rawValue
    }

    /// A body as it will be sent: bytes in memory, or streamed from disk.
    private enum EncodedBody {
        case data(Data, contentType: String?)
        case upload(RequestBodySource, contentType: String?)
    }

    private static func rewriteParameters<Value>(
        _ request: Request<Value>, with hooks: [any ParameterRewriter]
    )
        throws(TernError) -> (Parameters, RequestBody?)
    {
        var parameters = RequestParameters(
            query: request.query, body: request.body?.parameters, method: request.method,
            path: request.url, tags: request.tags)
        for hook in hooks {
            do { try hook.rewrite(&parameters) } catch { throw .fromHook(hook, error) }
        }
        guard let newBody = parameters.body else {
            // A hook removed the body parameters: keep a body only if it was not made of them.
            return (parameters.query, request.body?.parameters == nil ? request.body : nil)
        }
        return (parameters.query, request.body?.replacingParameters(newBody) ?? .parameters(newBody))
    }

    private static func rewriteURL(_ url: URL, with hooks: [any URLRewriter]) throws(TernError) -> URL {
        var url = url
        for hook in hooks {
            do { url = try hook.rewrite(url) } catch { throw .fromHook(hook, error) }
        }
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else {
            throw .invalidRequest(.unsupportedScheme(url.scheme ?? ""))
        }
        guard let host = url.host, !host.isEmpty else { throw .invalidRequest(.malformedURL(url.absoluteString)) }
        return url
    }

    /// Header names are RFC 9110 tokens; values may not contain CR, LF or NUL (header injection).
    static func validateHeader(name: String, value: String) throws(TernError) {
        let nameIsToken = !name.isEmpty && name.utf8.allSatisfy { tokenCharacters[Int($0)] }
        let valueIsSafe = !value.utf8.contains { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") || $0 == 0 }
        guard nameIsToken, valueIsSafe else { throw .invalidRequest(.invalidHeader(name: name)) }
    }

    private static let tokenCharacters = ByteSet("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

    private static func encode(_ body: RequestBody, settings: RequestSettings) throws(TernError) -> EncodedBody {
        func inMemory(_ encoded: (Data, String?)) -> EncodedBody { .data(encoded.0, contentType: encoded.1) }
        switch body.content {
        case .form(let parameters):
            return inMemory(try encode(parameters, as: .form, settings: settings))
        case .jsonParameters(let parameters):
            return inMemory(try encode(parameters, as: .json, settings: settings))
        case .parameters(let parameters, let encoding):
            return inMemory(try encode(parameters, as: encoding ?? settings.bodyEncoding, settings: settings))
        case .encodable(let encode):
            do {
                return .data(try encode(), contentType: "application/json")
            } catch let EncodingError.invalidValue(value, context) {
                let path = context.codingPath.map(\.stringValue).joined(separator: ".")
                throw .invalidRequest(
                    .unencodableValue(
                        key: path.isEmpty ? "(root)" : path,
                        reason: "\(type(of: value)): \(context.debugDescription)"))
            } catch {
                throw .invalidRequest(.unencodableValue(key: "(root)", reason: String(describing: error)))
            }
        case .data(let data, let contentType):
            return .data(data, contentType: contentType)
        case .file(let url, let contentType):
            let source = RequestBodySource(.file(url), length: try FileBody.size(of: url))
            return .upload(source, contentType: contentType ?? MIMEType.forFileName(url.lastPathComponent))
        case .multipart(let form):
            let length = try MultipartEncoder.length(of: form)
            guard length > Int64(form.memoryThreshold) else {
                return .data(try MultipartEncoder.data(of: form), contentType: form.contentType)
            }
            return .upload(RequestBodySource(.multipart(form), length: length), contentType: form.contentType)
        case .stream(let body):
            if let length = body.length, length < 0 {
                throw .invalidRequest(.invalidValue(name: "length", reason: "a body's length cannot be negative (\(length))"))
            }
            return .upload(
                RequestBodySource(.produced(body), length: body.length), contentType: body.contentType ?? "application/octet-stream")
        }
    }

    private static func encode(
        _ parameters: Parameters, as encoding: BodyEncoding, settings: RequestSettings
    ) throws(TernError) -> (Data, String?) {
        switch encoding {
        case .form: (Data(try settings.parameterEncoding.encode(parameters).utf8), "application/x-www-form-urlencoded; charset=utf-8")
        case .json: (try JSONBodyEncoder.encode(parameters), "application/json")
        }
    }
}

/// Encodes a parameter dictionary as a JSON object, checking every value first so that
/// `JSONSerialization` never sees one it would reject (on Apple platforms it raises an
/// Objective-C exception, which would crash the app). TernStubs' JSON answers use it too.
package enum JSONBodyEncoder {
    package static func encode(_ parameters: Parameters) throws(TernError) -> Data {
        let object = try jsonValue(parameters, path: "")
        guard JSONSerialization.isValidJSONObject(object),
            let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        else { throw .invalidRequest(.unencodableValue(key: "(root)", reason: "not a valid JSON object")) }
        return data
    }

    private static func jsonValue(_ value: Any, path: String) throws(TernError) -> Any {
        if let optional = value as? any OptionalParameter {
            guard let wrapped = optional.wrappedParameter else { return NSNull() }
            return try jsonValue(wrapped, path: path)
        }
        if type(of: value) is NSNumber.Type, let number = value as? NSNumber {
            guard NSNumber.isBoolean(number) || number.doubleValue.isFinite else { throw nonFinite(path) }
            return number
        }
        switch value {
        case is NSNull, is String, is Bool, is Int, is Int8, is Int16, is Int32, is Int64,
            is UInt, is UInt8, is UInt16, is UInt32, is UInt64:
            return value
        case let double as Double:
            guard double.isFinite else { throw nonFinite(path) }
            return double
        case let float as Float:
            guard float.isFinite else { throw nonFinite(path) }
            return Double(float)
        case let substring as Substring:
            return String(substring)
        case let json as JSON:
            return json.anyValue
        case let dictionary as [String: Any]:
            var object: [String: Any] = [:]
            for (key, item) in dictionary { object[key] = try jsonValue(item, path: path.isEmpty ? key : "\(path).\(key)") }
            return object
        case let array as [Any]:
            var items: [Any] = []
            for (index, item) in array.enumerated() { items.append(try jsonValue(item, path: "\(path)[\(index)]")) }
            return items
        default:
            throw .invalidRequest(.unencodableValue(key: path.isEmpty ? "(root)" : path, reason: "\(type(of: value)) is not a JSON value"))
        }
    }

    private static func nonFinite(_ path: String) -> TernError {
        .invalidRequest(.unencodableValue(key: path, reason: "NaN and infinity have no JSON form"))
    }
}
