import Foundation

/// A response's status and headers as a transport read them. Foundation's `HTTPURLResponse` is
/// built from it only when something asks for one (`httpResponse`: `Response.httpResponse`, a
/// custom serializer, a monitor): on Linux building one sanitises every header and costs
/// 10–15 µs, and most responses never need it. Tern's own path reads the status and headers here.
/// Thread safety: immutable apart from the `HTTPURLResponse` built once under a lock; safe to share.
// Sendable: the `HTTPURLResponse` built from parts is only read or written under its `Locked`;
// a head that wraps a Foundation response has nothing to build.
public final class ResponseHead: @unchecked Sendable {
    /// The URL the response came from.
    public let url: URL?
    /// The HTTP status code.
    public let statusCode: Int
    private let storage: Storage

    /// Where the fields are.
    private enum Storage {
        /// In Foundation's response, which this head wraps.
        case foundation(HTTPURLResponse)
        /// As read, with the `HTTPURLResponse` once something asked for one.
        case parts([String: String], built: Locked<HTTPURLResponse?>)
    }

    /// A head from its parts; `HTTPURLResponse` comes later, if asked for.
    public init(url: URL?, statusCode: Int, headerFields: [String: String]) {
        self.url = url
        self.statusCode = statusCode
        storage = .parts(headerFields, built: Locked(nil))
    }

    /// The head of a response Foundation already built (its fields are read from it when asked).
    public init(_ response: HTTPURLResponse) {
        url = response.url
        statusCode = response.statusCode
        storage = .foundation(response)
    }

    /// The header fields; a repeated field's values are joined with ", ".
    public var headerFields: [String: String] {
        switch storage {
        case .parts(let fields, _):
            return fields
        case .foundation(let response):
            var fields: [String: String] = [:]
            for case (let name as String, let value as String) in response.allHeaderFields { fields[name] = value }
            return fields
        }
    }

    /// The response as Foundation's value, built on first use.
    public var httpResponse: HTTPURLResponse {
        switch storage {
        case .foundation(let response):
            return response
        case .parts(let fields, let built):
            return built.withLock { built in
                if let built { return built }
                // Foundation's initializer is failable in name only (it builds from any status and fields).
                let url = url ?? URL(string: "about:blank")!
                guard
                    let response = HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: fields)
                        ?? HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: nil, headerFields: nil)
                else {
                    preconditionFailure("HTTPURLResponse refused status \(statusCode) for \(url)")
                }
                built = response
                return response
            }
        }
    }

    /// A header's value, its name compared case-insensitively (ASCII).
    public func value(forHTTPHeaderField name: String) -> String? {
        switch storage {
        case .foundation(let response):
            return response.value(forHTTPHeaderField: name)
        case .parts(let fields, _):
            return fields.headerValue(named: name)
        }
    }

    /// `Content-Length` as announced; -1 when there is none (as `URLResponse.expectedContentLength`).
    public var expectedContentLength: Int64 {
        value(forHTTPHeaderField: "Content-Length").flatMap(Self.contentLength) ?? -1
    }

    /// A `Content-Length` value as a number: decimal digits, optionally between spaces or tabs;
    /// nil for anything else. Read as bytes (Foundation's trimming cost microseconds per response).
    static func contentLength(_ value: String) -> Int64? {
        var utf8 = Substring(value).utf8
        while let first = utf8.first, first == 0x20 || first == 0x09 { utf8.removeFirst() }
        while let last = utf8.last, last == 0x20 || last == 0x09 { utf8.removeLast() }
        guard !utf8.isEmpty else { return nil }
        var length: Int64 = 0
        for byte in utf8 {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            let (tens, overflow) = length.multipliedReportingOverflow(by: 10)
            guard !overflow, tens <= Int64.max - Int64(byte - 0x30) else { return nil }
            length = tens + Int64(byte - 0x30)
        }
        return length
    }

    /// The `charset` parameter of `Content-Type`, lowercased, unquoted; nil when there is none.
    var textEncodingName: String? {
        guard let type = value(forHTTPHeaderField: "Content-Type") else { return nil }
        for parameter in type.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, Self.sameName(pair[0].trimmingCharacters(in: .whitespaces), "charset") else { continue }
            return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: "\" ")).lowercased()
        }
        return nil
    }

    /// Whether two header names are equal ignoring ASCII case.
    static func sameName(_ a: String, _ b: String) -> Bool {
        func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
        return a.utf8.count == b.utf8.count && zip(a.utf8, b.utf8).allSatisfy { lower($0) == lower($1) }
    }
}

extension Dictionary where Key == String, Value == String {
    /// The value of the header field `name` in these fields, the name compared ignoring ASCII case
    /// (header names are ASCII tokens); an exact match is looked up first.
    func headerValue(named name: String) -> String? {
        if let exact = self[name] { return exact }
        return first { ResponseHead.sameName($0.key, name) }?.value
    }
}
