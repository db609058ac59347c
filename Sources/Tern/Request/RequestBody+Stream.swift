import Foundation

/// A body produced while it is sent, as the request holds it: how to start producing it, and
/// whether that can be done more than once.
struct StreamedBody: Sendable {
    /// The body's length in bytes, when known.
    let length: Int64?
    /// The `Content-Type` to send, unless the request sets one.
    let contentType: String?
    /// Whether `produce` may run again (for a 307/308 redirect or a restarted request).
    let isReplayable: Bool
    /// Writes the body into a stream; run once per attempt that sends it.
    let produce: @Sendable (RequestBodyStream) async throws -> Void
}

extension RequestBody {
    /// A body read from `sequence` while it is sent — a generated export, a proxied upload, a log
    /// shipper — with `Content-Length` when `length` is given, else chunked (DATA frames on
    /// HTTP/2). Tern asks `sequence` for more only as the transport sends (about 256 KB ahead);
    /// upload progress counts the bytes sent.
    ///
    /// A sequence is read once: such a request is never sent twice. A retry the retry policy
    /// would make is not made (the request ends with the attempt's failure), and a 307/308
    /// redirect ends the request with `TernError.requestBodyFailed(.notReplayable)`. To allow
    /// both, give a factory: ``stream(length:contentType:makeSequence:)``.
    ///
    /// If `sequence` throws, the request ends with `.requestBodyFailed(.producerFailed)`; if it
    /// produces more or fewer bytes than `length`, with `.requestBodyFailed(.lengthMismatch)`.
    /// If the request ends first (cancelled, timed out, answered early), Tern stops iterating.
    /// - Parameters:
    ///   - sequence: The body, in pieces of any size.
    ///   - length: The body's exact length in bytes, when known.
    ///   - contentType: The `Content-Type` to send, unless the request sets one;
    ///     `application/octet-stream` when nil.
    public static func stream<Chunks: AsyncSequence & Sendable>(
        _ sequence: Chunks, length: Int64? = nil, contentType: String? = nil
    ) -> RequestBody where Chunks.Element == Data {
        let body = StreamedBody(length: length, contentType: contentType, isReplayable: false) { stream in
            for try await chunk in sequence { try await stream.write(chunk) }
        }
        return RequestBody(content: .stream(body))
    }

    /// A body read from a new sequence for each attempt that sends it: like
    /// ``stream(_:length:contentType:)``, but a retry, a 307/308 redirect or a restarted request
    /// calls `makeSequence` again and sends the body from its start.
    /// - Parameters:
    ///   - length: The body's exact length in bytes, when known.
    ///   - contentType: The `Content-Type` to send, unless the request sets one;
    ///     `application/octet-stream` when nil.
    ///   - makeSequence: Makes the body's sequence, once per attempt.
    public static func stream<Chunks: AsyncSequence & Sendable>(
        length: Int64? = nil, contentType: String? = nil, makeSequence: @escaping @Sendable () -> Chunks
    ) -> RequestBody where Chunks.Element == Data {
        let body = StreamedBody(length: length, contentType: contentType, isReplayable: true) { stream in
            for try await chunk in makeSequence() { try await stream.write(chunk) }
        }
        return RequestBody(content: .stream(body))
    }

    /// A body written by `producer` while it is sent: each `await writer.write(data)` returns once
    /// the transport has room for more. Tern calls `producer` once per attempt that sends the
    /// body (a retry, a 307/308 redirect or a restarted request starts it again from the
    /// beginning); `producer` returning ends the body.
    /// ```swift
    /// let export = Request<JSON>("exports", method: .post, body: .stream(contentType: "text/csv") { writer in
    ///     for page in 1...pages { try await writer.write(try await rows(page)) }
    /// })
    /// ```
    /// - Parameters:
    ///   - length: The body's exact length in bytes, when known.
    ///   - contentType: The `Content-Type` to send, unless the request sets one;
    ///     `application/octet-stream` when nil.
    ///   - producer: Writes the body; what it throws ends the request with
    ///     `TernError.requestBodyFailed(.producerFailed)`.
    public static func stream(
        length: Int64? = nil, contentType: String? = nil,
        producer: @escaping @Sendable (_ writer: RequestBodyStream) async throws -> Void
    ) -> RequestBody {
        RequestBody(content: .stream(StreamedBody(length: length, contentType: contentType, isReplayable: true, produce: producer)))
    }
}
