import Foundation

/// Which responses count as success before the body is decoded.
///
/// Status codes are checked first (`TernError.unacceptableStatus` carries the code and body), then
/// the `Content-Type` of a non-empty body (`TernError.unacceptableContentType`).
/// Thread safety: a value type, safe to share.
public struct ResponseValidation: Sendable, Equatable {
    /// Status codes that count as success; `200..<300` by default.
    public var acceptableStatusCodes: Set<Int>
    /// MIME types a non-empty body may have, like AFNetworking's `acceptableContentTypes`.
    /// `nil` (the default) uses the serializer's own list: JSON for `.json` and `.decodable`,
    /// anything for `.data` and `.string`. Entries may be `type/subtype`, `type/*`, `*/*` or
    /// `application/*+json`; parameters such as `charset` are ignored.
    public var acceptableContentTypes: Set<String>?

    /// Creates a validation; the defaults accept `200..<300` and the serializer's content types.
    public init(acceptableStatusCodes: some Sequence<Int> = 200..<300, acceptableContentTypes: Set<String>? = nil) {
        self.acceptableStatusCodes = Set(acceptableStatusCodes)
        self.acceptableContentTypes = acceptableContentTypes
    }

    /// Status `200..<300`, the serializer's content types.
    public static let `default` = ResponseValidation()

    /// Checks status and content type of the response to a `method` request.
    /// - Throws: `.unacceptableStatus` or `.unacceptableContentType`, each with the body.
    func validate(_ response: ResponseHead, body: Data, serializerTypes: Set<String>?, method: String) throws(TernError) {
        guard acceptableStatusCodes.contains(response.statusCode) else {
            throw .unacceptableStatus(
                code: response.statusCode, body: body, headers: response.headerFields,
                request: RequestLine(method: method, url: response.url))
        }
        guard !body.isEmpty, let accepted = acceptableContentTypes ?? serializerTypes else { return }
        let header = response.value(forHTTPHeaderField: "Content-Type")
        guard accepted.contains("*/*") || header.map({ Self.mimeType($0, matchesAny: accepted) }) == true else {
            throw .unacceptableContentType(header, body: body)
        }
    }

    static func mimeType(_ header: String, matchesAny accepted: Set<String>) -> Bool {
        let mime = header.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() } ?? ""
        let parts = mime.split(separator: "/", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { return accepted.contains("*/*") }
        return accepted.contains { pattern in
            let wanted = pattern.lowercased().split(separator: "/", maxSplits: 1).map(String.init)
            guard wanted.count == 2 else { return false }
            guard wanted[0] == "*" || wanted[0] == parts[0] else { return false }
            if wanted[1] == "*" || wanted[1] == parts[1] { return true }
            if wanted[1].hasPrefix("*+") { return parts[1].hasSuffix(String(wanted[1].dropFirst())) }
            return false
        }
    }
}
