import Foundation

/// The cache key of a request: canonical text, hashed.
///
/// The text is `namespace`, method, the absolute URL with its query pairs sorted (ignored
/// parameters left out), the body (form pairs sorted, JSON objects with sorted keys, ignored
/// parameters left out; other bodies as bytes) and the headers the policy names (lowercased,
/// sorted), then the policy's transform. The stored key is
/// `<hash of the URL without query>-<hash of the text>` (the transform applies to both): entries
/// of one endpoint share a prefix, so `Client.removeCachedResponses(url:)` is one range delete
/// (for keys built without a transform). The text is stored with the entry
/// and compared on read, so a hash collision is a miss, never someone else's response.
struct CacheKey: Sendable, Equatable {
    let text: String
    let stored: String

    init(text: String, stored: String) {
        self.text = text
        self.stored = stored
    }

    init?(_ request: URLRequest, policy: CachePolicy) {
        guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        let method = request.httpMethod ?? "GET"
        let pairs = (components.percentEncodedQueryItems ?? [])
            .filter { !policy.ignoredParameters.contains($0.name.removingPercentEncoding ?? $0.name) }
            .map { "\($0.name)=\($0.value ?? "")" }
            .sorted()
        let endpoint = Self.endpoint(components) ?? url.absoluteString
        var text = "\(policy.namespace)\n\(method) \(endpoint)?\(pairs.joined(separator: "&"))\n"
        text += Self.canonicalBody(request, ignoring: policy.ignoredParameters) + "\n"
        for name in policy.keyHeaders.map({ $0.lowercased() }).sorted() {
            text += "\(name): \(request.value(forHTTPHeaderField: name) ?? "")\n"
        }
        var prefix = endpoint
        if let transform = policy.keyTransform {
            text = transform(text)
            prefix = transform(endpoint)
        }
        self.text = text
        stored = Self.prefix(ofEndpoint: prefix) + Self.hex(Self.fnv1a(text))
    }

    /// The key prefix shared by every entry of `url` (its query ignored).
    static func prefix(for url: URL) -> String? {
        URLComponents(url: url, resolvingAgainstBaseURL: false).flatMap(endpoint).map(prefix(ofEndpoint:))
    }

    private static func prefix(ofEndpoint endpoint: String) -> String { hex(fnv1a(endpoint)) + "-" }

    /// The URL without its query and fragment.
    private static func endpoint(_ components: URLComponents) -> String? {
        var components = components
        components.percentEncodedQuery = nil
        components.fragment = nil
        return components.string
    }

    private static func canonicalBody(_ request: URLRequest, ignoring ignored: Set<String>) -> String {
        guard let body = request.httpBody, !body.isEmpty else { return "" }
        let type = (request.value(forHTTPHeaderField: "Content-Type") ?? "").lowercased()
        if type.hasPrefix("application/x-www-form-urlencoded") {
            let text = String(decoding: body, as: UTF8.self)
            return text.split(separator: "&").filter { pair in
                let name = String(pair.split(separator: "=", maxSplits: 1).first ?? "")
                return !ignored.contains(name.removingPercentEncoding ?? name)
            }.sorted().joined(separator: "&")
        }
        // Checked before serialising: on Apple platforms JSONSerialization raises an Objective-C
        // exception (uncatchable in Swift) for what Linux reports as an error.
        if type.hasPrefix("application/json"), let object = try? JSONSerialization.jsonObject(with: body),
            case let kept = Self.dropping(ignored, from: object), JSONSerialization.isValidJSONObject(kept),
            let canonical = try? JSONSerialization.data(withJSONObject: kept, options: [.sortedKeys])
        {
            return String(decoding: canonical, as: UTF8.self)
        }
        return body.base64EncodedString()
    }

    private static func dropping(_ ignored: Set<String>, from object: Any) -> Any {
        guard !ignored.isEmpty, let dictionary = object as? [String: Any] else { return object }
        return dictionary.filter { !ignored.contains($0.key) }
    }

    /// 64-bit FNV-1a over the UTF-8 bytes: fast, stable across runs and platforms.
    static func fnv1a(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
