import Foundation

/// The framing checks of RFC 9112 §6.3 that a transport's HTTP stack does not make the same way
/// everywhere, made by Tern on every transport as a response head arrives.
///
/// Without `Transfer-Encoding`, `Content-Length` must be one non-negative decimal number, or a
/// list of the same number (`10, 10`, as repeated fields arrive joined); anything else — two
/// different lengths, `-1`, `ten` — leaves the body's end unknown, an unrecoverable error: the
/// request fails with `URLError(.badServerResponse)` saying so. With `Transfer-Encoding`,
/// `Content-Length` is ignored (chunked framing wins), as both transports already do.
enum ResponseFraming {
    /// Why a head with these `Content-Length` and `Transfer-Encoding` values cannot be read; nil
    /// when it can.
    static func problem(contentLength: String?, transferEncoding: String?) -> String? {
        guard transferEncoding == nil, let contentLength else { return nil }
        // One number (nearly every response) is one pass of `ResponseHead.contentLength`'s
        // parser, with no list of parts made for it.
        guard contentLength.utf8.contains(UInt8(ascii: ",")) else {
            return ResponseHead.contentLength(contentLength) == nil ? "invalid Content-Length \"\(contentLength)\"" : nil
        }
        var first: Int64?
        for item in contentLength.split(separator: ",", omittingEmptySubsequences: false) {
            guard let value = ResponseHead.contentLength(String(item)) else { return "invalid Content-Length \"\(contentLength)\"" }
            if let first, first != value { return "conflicting Content-Length values \"\(contentLength)\"" }
            first = value
        }
        return nil
    }

    /// The error a request with an unreadable head fails with.
    static func error(_ problem: String) -> URLError {
        URLError(.badServerResponse, userInfo: [NSLocalizedDescriptionKey: "the response's framing is invalid: \(problem)"])
    }

    /// The framing error of `response`, if any.
    static func error(for response: HTTPURLResponse) -> URLError? {
        problem(
            contentLength: response.value(forHTTPHeaderField: "Content-Length"),
            transferEncoding: response.value(forHTTPHeaderField: "Transfer-Encoding")
        ).map(error)
    }
}
