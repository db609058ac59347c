import Foundation
import Tern

/// What a stub answers: a status, headers and a body — or a transport error — optionally after a
/// delay and in chunks (so progress and streaming code see several pieces).
/// Thread safety: a value type, safe to share.
public struct StubResponse: Sendable {
    /// The status code; 200 by default.
    public var status: Int
    /// The response headers.
    public var headers: [String: String]
    /// The body.
    public var body: Data
    /// A transport failure to report instead of a response.
    public var failure: URLError?
    /// Seconds before the response headers arrive.
    public var delay: TimeInterval
    /// How many pieces the body arrives in (at least 1).
    public var chunks: Int
    /// Seconds between two pieces.
    public var chunkInterval: TimeInterval

    /// Creates a response.
    public init(
        status: Int = 200, headers: [String: String] = [:], body: Data = Data(), failure: URLError? = nil,
        delay: TimeInterval = 0, chunks: Int = 1, chunkInterval: TimeInterval = 0
    ) {
        self.status = status
        self.headers = headers
        self.body = body
        self.failure = failure
        self.delay = delay
        self.chunks = max(1, chunks)
        self.chunkInterval = chunkInterval
    }

    /// A JSON body (`Content-Type: application/json`) from any `Encodable` value.
    public static func json<Value: Encodable>(_ value: Value, status: Int = 200) -> StubResponse {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return StubResponse(
            status: status, headers: ["Content-Type": "application/json"],
            body: (try? encoder.encode(value)) ?? Data("null".utf8))
    }

    /// A JSON object body from a dictionary of strings, numbers, bools, arrays, nested
    /// dictionaries and `NSNull`, as `RequestBody.json` takes it. A value that is not JSON answers
    /// 500 saying which. A literal is read as a `JSON` literal instead, which nests and mixes.
    @_disfavoredOverload
    public static func json(_ object: Parameters, status: Int = 200) -> StubResponse {
        do {
            // Encoded as `RequestBody.json` encodes it: the same values, the same refusals.
            return StubResponse(status: status, headers: ["Content-Type": "application/json"], body: try JSONBodyEncoder.encode(object))
        } catch {
            return .string("TernStubs: the stub's JSON body cannot be written: \(String(describing: error))", status: 500)
        }
    }

    /// A JSON body from a `JSON` value or literal, nested and mixed as JSON itself is:
    /// `.json(["slideshow": ["title": "Demo", "slides": [["title": "one"]]], "count": 3])`.
    public static func json(_ value: JSON, status: Int = 200) -> StubResponse {
        StubResponse(status: status, headers: ["Content-Type": "application/json"], body: Data(value.description.utf8))
    }

    /// A JSON body written as text.
    public static func json(text: String, status: Int = 200) -> StubResponse {
        StubResponse(status: status, headers: ["Content-Type": "application/json"], body: Data(text.utf8))
    }

    /// A UTF-8 text body.
    public static func string(_ text: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8") -> StubResponse {
        StubResponse(status: status, headers: ["Content-Type": contentType], body: Data(text.utf8))
    }

    /// A raw body.
    public static func data(_ data: Data, status: Int = 200, contentType: String = "application/octet-stream") -> StubResponse {
        StubResponse(status: status, headers: ["Content-Type": contentType], body: data)
    }

    /// A body read from a file when the response is built; a missing file answers 500 saying so.
    public static func file(_ url: URL, contentType: String = "application/octet-stream") -> StubResponse {
        guard let data = try? Data(contentsOf: url) else {
            return .string("TernStubs: cannot read \(url.path)", status: 500)
        }
        return .data(data, contentType: contentType)
    }

    /// Just a status, with an empty body.
    public static func status(_ code: Int) -> StubResponse { StubResponse(status: code) }

    /// A redirect to `location` (absolute, or relative to the request's URL); Tern follows it to
    /// the stub that matches there.
    public static func redirect(to location: String, status: Int = 302) -> StubResponse {
        StubResponse(status: status, headers: ["Location": location])
    }

    /// A transport failure: `.timedOut`, `.notConnectedToInternet`, `.networkConnectionLost`, …
    public static func failure(_ code: URLError.Code) -> StubResponse { StubResponse(failure: URLError(code)) }

    /// A copy that arrives after `seconds`.
    public func delayed(by seconds: TimeInterval) -> StubResponse {
        var copy = self
        copy.delay = seconds
        return copy
    }

    /// A copy whose body arrives in `pieces` pieces, `interval` seconds apart.
    public func chunked(into pieces: Int, every interval: TimeInterval = 0.01) -> StubResponse {
        var copy = self
        copy.chunks = max(1, pieces)
        copy.chunkInterval = interval
        return copy
    }
}
