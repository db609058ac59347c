import Foundation

/// Builds the `URLRequest` for a `Request` under a client's configuration, or says exactly why
/// it cannot be built.
enum RequestBuilder {
    static func makeURLRequest<Value>(_ request: Request<Value>, configuration: ClientConfiguration) throws(TernError) -> URLRequest {
        let url = try URLBuilder.makeURL(request.url, baseURL: configuration.baseURL,
                                         parameters: request.query, encoding: configuration.parameterEncoding)
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        urlRequest.timeoutInterval = request.timeout ?? configuration.timeout
        urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
        for (name, value) in configuration.headers.merging(request.headers, uniquingKeysWith: { _, own in own }) {
            try validateHeader(name: name, value: value)
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        if let body = request.body {
            guard request.method.allowsBody else { throw .invalidRequest(.bodyNotAllowed(method: request.method.rawValue)) }
            let (data, contentType) = try encode(body, encoding: configuration.parameterEncoding)
            urlRequest.httpBody = data
            if let contentType, urlRequest.value(forHTTPHeaderField: "Content-Type") == nil {
                urlRequest.setValue(contentType, forHTTPHeaderField: "Content-Type")
            }
        }
        return urlRequest
    }

    /// Header names are RFC 9110 tokens; values may not contain CR, LF or NUL (header injection).
    static func validateHeader(name: String, value: String) throws(TernError) {
        let nameIsToken = !name.isEmpty && name.utf8.allSatisfy { tokenCharacters[Int($0)] }
        let valueIsSafe = !value.utf8.contains { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") || $0 == 0 }
        guard nameIsToken, valueIsSafe else { throw .invalidRequest(.invalidHeader(name: name)) }
    }

    private static let tokenCharacters = ByteSet("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

    private static func encode(_ body: RequestBody, encoding: ParameterEncoding) throws(TernError) -> (Data, String?) {
        switch body.content {
        case .form(let parameters):
            return (Data(try encoding.encode(parameters).utf8), "application/x-www-form-urlencoded; charset=utf-8")
        case .jsonParameters(let parameters):
            return (try JSONBodyEncoder.encode(parameters), "application/json")
        case .encodable(let encode):
            do {
                return (try encode(), "application/json")
            } catch let EncodingError.invalidValue(value, context) {
                let path = context.codingPath.map(\.stringValue).joined(separator: ".")
                throw .invalidRequest(.unencodableValue(key: path.isEmpty ? "(root)" : path,
                                                        reason: "\(type(of: value)): \(context.debugDescription)"))
            } catch {
                throw .invalidRequest(.unencodableValue(key: "(root)", reason: String(describing: error)))
            }
        case .data(let data, let contentType):
            return (data, contentType)
        }
    }
}

/// Encodes a parameter dictionary as a JSON object, checking every value first so that
/// `JSONSerialization` never sees one it would reject (on Apple platforms it raises an
/// Objective-C exception, which would crash the app).
enum JSONBodyEncoder {
    static func encode(_ parameters: Parameters) throws(TernError) -> Data {
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
