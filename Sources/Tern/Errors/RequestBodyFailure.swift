import Foundation

/// Why a body produced while it is sent (`RequestBody.stream`) could not be sent whole; carried
/// by `TernError.requestBodyFailed`.
/// Thread safety: a value type, safe to share.
public enum RequestBodyFailure: Error, Sendable, CustomStringConvertible {
    /// The producer threw `error` (the sequence's iterator, or the producer closure).
    case producerFailed(any Error)
    /// The producer made `produced` bytes after announcing `expected` (the `Content-Length`
    /// sent): the server would have read a body cut short, or the start of the next request.
    case lengthMismatch(expected: Int64, produced: Int64)
    /// The body can be produced only once (a sequence, not a factory of sequences) and Tern needed
    /// it again: for the 307/308 redirect `redirect`, or, when nil, to send the request again
    /// after a `ResponseRule` restarted it. A retry the retry policy asks for is not made for such
    /// a body: the request ends with the attempt's own failure.
    case notReplayable(redirect: Redirect?)

    /// One line for logs.
    public var description: String {
        switch self {
        case .producerFailed(let error): "its producer failed: \(error)"
        case .lengthMismatch(let expected, let produced):
            "it announced \(expected) bytes and produced \(produced > expected ? "more" : "\(produced)")"
        case .notReplayable(let redirect?):
            "a \(redirect.statusCode) redirect to \(redirect.to.absoluteString) needs it again, and it can be produced only once (give a factory)"
        case .notReplayable(nil):
            "the request was restarted, and its body can be produced only once (give a factory)"
        }
    }
}
