import Foundation

/// How a request body is compressed before it is sent, with `Content-Encoding` set to match: for
/// an API that accepts compressed uploads (logs, analytics, large JSON documents). Set it on a
/// request (`Request.compression`) or on an API group (`APIGroup.Settings.requestCompression`).
/// ```swift
/// var upload = Request<JSON>("logs", method: .post, body: .data(logLines, contentType: "text/plain"))
/// upload.compression = .gzip
/// ```
/// Bodies in memory (data, JSON, forms, small multipart forms) are compressed; a body streamed
/// from a file (or a multipart form above its memory threshold) is refused with
/// `TernError.invalidRequest`, as is a request that sets `Content-Encoding` itself (its body is
/// taken to be encoded already and is sent as it is). Progress and the sizes reported count the
/// compressed bytes, those on the wire. Thread safety: a value type, safe to share.
public enum RequestCompression: String, Sendable, Hashable, CaseIterable {
    /// gzip (RFC 1952): the coding every server that accepts compressed bodies knows.
    case gzip
    /// zlib-wrapped deflate (RFC 1950), the HTTP coding named `deflate`.
    case deflate

    /// `body` compressed with this coding.
    package func compress(_ body: Data) throws(TernError) -> Data {
        try ZLib.loaded.get().compress(body, gzip: self == .gzip)
    }
}

extension Request {
    /// Compresses the body before it is sent (see `RequestCompression`); nil uses the API group's
    /// `requestCompression`, and without one the body goes as it is. Default nil.
    public var compression: RequestCompression? {
        get { extras?.values.compression }
        set { editExtras { $0.compression = newValue } }
    }
}
