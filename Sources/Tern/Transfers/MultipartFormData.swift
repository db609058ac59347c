import Foundation

/// A `multipart/form-data` body (RFC 7578): text fields and files, as an HTML form sends them.
///
/// ```swift
/// var form = MultipartFormData()
/// form.append("Beijing", name: "city")
/// form.append(fileAt: photoURL, name: "photo")            // name and type from the file
/// let upload = Request<JSON>("upload", method: .post, body: .multipart(form))
/// ```
/// Names and file names may be any Unicode: they are sent as UTF-8, with `"`, CR and LF
/// percent-escaped as browsers do, and a file name that is not ASCII also gets an RFC 5987
/// `filename*=UTF-8''…` parameter. The boundary holds 128 random bits and is checked against
/// the text and data parts, so it cannot occur in the body. A body up to `memoryThreshold`
/// bytes is built in memory; a larger one is written part by part to a temporary file and
/// streamed from disk with its `Content-Length` (never chunked), so a 1 GB file is never in
/// memory; the temporary file is removed when the request ends, however it ends. Files are
/// read when the request is sent, not when they are appended.
/// Thread safety: a value type, safe to share.
public struct MultipartFormData: Sendable {
    /// One part of the form.
    enum Part: Sendable {
        case data(Data, name: String, fileName: String?, mimeType: String?)
        case file(URL, name: String, fileName: String, mimeType: String)
    }

    /// The boundary between parts.
    public private(set) var boundary: String
    /// Bodies up to this many bytes are built in memory; larger ones are streamed from a temporary
    /// file. Default 10 MB.
    public var memoryThreshold: Int = 10_000_000
    private(set) var parts: [Part] = []

    /// Creates an empty form with a random boundary.
    public init() {
        boundary = Self.randomBoundary()
    }

    /// The `Content-Type` header of this form's body.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Adds a text field.
    public mutating func append(_ value: String, name: String) {
        append(Data(value.utf8), name: name, fileName: nil, mimeType: nil)
    }

    /// Adds bytes: a field, or a file when `fileName` is given.
    /// - Parameters:
    ///   - data: The part's content.
    ///   - name: The form field name.
    ///   - fileName: The file name the server sees; nil sends a plain field.
    ///   - mimeType: The part's `Content-Type`; nil infers it from `fileName`'s extension (for
    ///     files) or sends none (for fields).
    public mutating func append(_ data: Data, name: String, fileName: String? = nil, mimeType: String? = nil) {
        parts.append(.data(data, name: name, fileName: fileName, mimeType: mimeType ?? fileName.map(MIMEType.forFileName)))
        // A boundary that occurs in a part would end it early: pick another.
        while parts.contains(where: { $0.contains(boundary) }) { boundary = Self.randomBoundary() }
    }

    /// Adds a file from disk, read (and streamed when large) as the request is sent.
    /// - Parameters:
    ///   - url: A file URL.
    ///   - name: The form field name.
    ///   - fileName: The file name the server sees; default the file's own name.
    ///   - mimeType: The part's `Content-Type`; default inferred from the file name's extension
    ///     (`application/octet-stream` when unknown).
    public mutating func append(fileAt url: URL, name: String, fileName: String? = nil, mimeType: String? = nil) {
        let fileName = fileName ?? url.lastPathComponent
        parts.append(.file(url, name: name, fileName: fileName, mimeType: mimeType ?? MIMEType.forFileName(fileName)))
    }

    static func randomBoundary() -> String {
        let random = (0..<2).map { _ in String(UInt64.random(in: .min ... .max), radix: 16) }
        return "Tern-" + random.map { String(repeating: "0", count: 16 - $0.count) + $0 }.joined()
    }
}

extension MultipartFormData.Part {
    /// The part's header block, from its boundary line to the blank line before its content.
    func head(boundary: String) -> Data {
        var lines = ["--\(boundary)"]
        switch self {
        case .data(_, let name, let fileName, let mimeType):
            lines.append(Self.disposition(name: name, fileName: fileName))
            if let mimeType { lines.append("Content-Type: \(mimeType)") }
        case .file(_, let name, let fileName, let mimeType):
            lines.append(Self.disposition(name: name, fileName: fileName))
            lines.append("Content-Type: \(mimeType)")
        }
        return Data((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// Whether `boundary` occurs in the part's own bytes (files are not read here).
    func contains(_ boundary: String) -> Bool {
        guard case .data(let data, _, _, _) = self else { return false }
        return data.range(of: Data(boundary.utf8)) != nil
    }

    /// `Content-Disposition: form-data; name="…"[; filename="…"[; filename*=UTF-8''…]]`.
    static func disposition(name: String, fileName: String?) -> String {
        var header = "Content-Disposition: form-data; name=\"\(escaped(name))\""
        if let fileName {
            header += "; filename=\"\(escaped(fileName))\""
            if !fileName.unicodeScalars.allSatisfy(\.isASCII) {
                let encoded = fileName.addingPercentEncoding(withAllowedCharacters: attributeCharacters) ?? fileName
                header += "; filename*=UTF-8''\(encoded)"
            }
        }
        return header
    }

    /// A quoted parameter as browsers send it: UTF-8, with `"`, CR and LF percent-escaped (and
    /// NUL, which no header may carry).
    static func escaped(_ value: String) -> String {
        value.replacingOccurrences(of: "\"", with: "%22").replacingOccurrences(of: "\r", with: "%0D")
            .replacingOccurrences(of: "\n", with: "%0A").replacingOccurrences(of: "\0", with: "%00")
    }

    /// Refuses a part whose header would carry what the caller did not write: names and file
    /// names are escaped (`escaped`), a MIME type is sent as given, so CR, LF or NUL in it fail.
    func validate() throws(TernError) {
        let (name, mimeType): (String, String?) =
            switch self {
            case .data(_, let name, _, let mimeType): (name, mimeType)
            case .file(_, let name, _, let mimeType): (name, mimeType)
            }
        if let mimeType, mimeType.utf8.contains(where: { $0 == UInt8(ascii: "\r") || $0 == UInt8(ascii: "\n") || $0 == 0 }) {
            throw .invalidRequest(.invalidPart(name: name, reason: "its MIME type contains CR, LF or NUL"))
        }
    }

    /// RFC 5987 `attr-char`: what an extended parameter value keeps unescaped.
    static let attributeCharacters = CharacterSet(
        charactersIn:
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$&+-.^_`|~")
}

/// MIME types for common file extensions, the same on every platform.
enum MIMEType {
    static func forFileName(_ name: String) -> String {
        let ext = (name as NSString).pathExtension.lowercased()
        return types[ext] ?? "application/octet-stream"
    }

    private static let types: [String: String] = [
        "txt": "text/plain", "text": "text/plain", "md": "text/markdown", "csv": "text/csv", "html": "text/html",
        "htm": "text/html", "css": "text/css", "js": "text/javascript", "json": "application/json",
        "xml": "application/xml", "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip",
        "tar": "application/x-tar", "7z": "application/x-7z-compressed", "png": "image/png", "jpg": "image/jpeg",
        "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp", "heic": "image/heic", "svg": "image/svg+xml",
        "bmp": "image/bmp", "ico": "image/vnd.microsoft.icon", "tif": "image/tiff", "tiff": "image/tiff",
        "pgm": "image/x-portable-graymap", "mp3": "audio/mpeg", "m4a": "audio/mp4", "wav": "audio/wav",
        "aac": "audio/aac", "ogg": "audio/ogg", "mp4": "video/mp4", "mov": "video/quicktime", "webm": "video/webm",
        "doc": "application/msword", "xls": "application/vnd.ms-excel", "ppt": "application/vnd.ms-powerpoint",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "wasm": "application/wasm", "bin": "application/octet-stream",
    ]
}
