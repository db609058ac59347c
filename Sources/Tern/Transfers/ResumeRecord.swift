import Foundation

/// What a resumable download keeps beside its partial file, and the check that a 206 continues
/// that very file.
///
/// RFC 9110 forbids combining parts whose validators differ: a server that ignores `If-Range`
/// and answers with another version's bytes, or resumes at another byte, must not get them
/// appended: Tern then starts over from byte 0.
struct ResumeRecord: Codable, Equatable {
    /// The URL the partial body came from (a different URL never resumes it).
    var url: String
    /// A strong `ETag`, else `Last-Modified`, exactly as the server sent it: sent as `If-Range`.
    var validator: String
    /// Whether `validator` is an entity tag, compared with the `ETag` of a 206, rather than a
    /// date, compared with its `Last-Modified`. Nil in records of earlier releases, which kept
    /// only quoted tags.
    var isEntityTag: Bool? = nil
    /// The whole body's length, when the response that started the file announced it.
    var totalLength: Int64? = nil

    /// The record of a response that starts a file (a 200, or a 206 from byte 0), or nil when
    /// it has no validator `If-Range` can use.
    init?(_ response: HTTPURLResponse) {
        guard let (validator, isEntityTag) = Self.validator(of: response), let url = response.url?.absoluteString else { return nil }
        self.url = url
        self.validator = validator
        self.isEntityTag = isEntityTag
        let identity = (response.value(forHTTPHeaderField: "Content-Encoding") ?? "identity").lowercased() == "identity"
        if response.statusCode == 206 {
            totalLength = Self.contentRange(of: response)?.total
        } else if identity, response.expectedContentLength > 0 {
            totalLength = response.expectedContentLength  // of the bytes the file holds
        }
    }

    init(url: String, validator: String, isEntityTag: Bool, totalLength: Int64? = nil) {
        self.url = url
        self.validator = validator
        self.isEntityTag = isEntityTag
        self.totalLength = totalLength
    }

    /// The validator `If-Range` can use and whether it is an entity tag: a strong ETag, else
    /// Last-Modified; nil when neither. The tag is kept as the server wrote it, quoted or not
    /// (some servers send `ETag: range100000`): it is opaque, sent back and compared as it is.
    static func validator(of response: HTTPURLResponse) -> (String, isEntityTag: Bool)? {
        if let etag = response.value(forHTTPHeaderField: "ETag"), !etag.isEmpty, !etag.hasPrefix("W/") { return (etag, true) }
        return response.value(forHTTPHeaderField: "Last-Modified").map { ($0, false) }
    }

    /// Why `response`, a 206 to a request for the bytes from `offset` on, cannot continue the
    /// partial file this record describes; nil when it can: its `Content-Range` starts at
    /// `offset` and agrees with the known total length, and it carries the same validator, by
    /// strong comparison (a weak or missing ETag, or a missing date, does not match).
    func mismatch(with response: HTTPURLResponse, at offset: Int64) -> String? {
        guard let range = Self.contentRange(of: response) else { return "a 206 without a usable Content-Range" }
        if range.start != offset { return "the server resumed at byte \(range.start), the partial file ends at \(offset)" }
        if let known = totalLength, let total = range.total, known != total {
            return "the body is now \(total) bytes long, it was \(known)"
        }
        let current = response.value(forHTTPHeaderField: isEntityTag ?? validator.hasPrefix("\"") ? "ETag" : "Last-Modified")
        guard current == validator else {
            return "the partial file is version \(validator), the server sent \(current ?? "no validator")"
        }
        return nil
    }

    /// The first byte and the total length (nil for `*`) of a `Content-Range: bytes a-b/n` header.
    static func contentRange(of response: HTTPURLResponse) -> (start: Int64, total: Int64?)? {
        guard let header = response.value(forHTTPHeaderField: "Content-Range")?.lowercased(), header.hasPrefix("bytes ") else {
            return nil
        }
        let value = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let parts = value.split(separator: "/", maxSplits: 1)
        guard parts.count == 2, let dash = parts[0].firstIndex(of: "-"), let start = Int64(parts[0][..<dash]), start >= 0 else {
            return nil
        }
        return (start, parts[1] == "*" ? nil : Int64(parts[1]))
    }

    static func read(from url: URL) -> ResumeRecord? {
        guard let data = try? Data(contentsOf: url) else { return nil }
        return try? JSONDecoder().decode(ResumeRecord.self, from: data)
    }

    func write(to url: URL) {
        guard let data = try? JSONEncoder().encode(self) else { return }
        try? data.write(to: url, options: .atomic)
    }
}
