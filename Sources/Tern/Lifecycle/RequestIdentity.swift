import Foundation

/// What the repeat strategies compare: method, URL with its query pairs sorted, the body, and the
/// headers that say who is asking — `Authorization`, `Cookie` and any the client or request names
/// (`identityHeaders`) — so requests with different credentials never share a response or cancel
/// each other. For `.cancelOlder` and `.ignoreNewer` a caller-chosen key can replace all of it.
/// Cookies that URLSession adds from its cookie storage are not seen here; a client that shares
/// calls between users should send them as headers or use one client per user.
struct RequestIdentity: Hashable, Sendable {
    let method: String
    let url: String
    let body: Data?
    let headers: [String]

    /// Headers that always take part: the ones that carry who is asking.
    static let credentialHeaders: Set<String> = ["authorization", "cookie"]

    /// An identity unlike any other (a body on disk, which is not compared byte by byte).
    static func unique() -> RequestIdentity { RequestIdentity(key: UUID().uuidString) }

    init(key: String) {
        method = ""
        url = "key:" + key
        body = nil
        headers = []
    }

    /// The identity of `request`, with the credential headers and the `named` ones.
    init(_ request: URLRequest, naming named: Set<String> = []) {
        let names = Self.credentialHeaders.union(named.map { $0.lowercased() })
        method = request.httpMethod ?? "GET"
        body = request.httpBody
        url = request.url.map { Self.canonical($0, keepingQuery: true) } ?? ""
        headers = (request.allHTTPHeaderFields ?? [:]).compactMap { name, value in
            names.contains(name.lowercased()) ? name.lowercased() + ":" + value : nil
        }.sorted()
    }

    /// The identity a request is admitted under, or nil when its strategy compares nothing (`.allow`).
    init?<Value>(for request: Request<Value>, _ urlRequest: URLRequest, strategy: RepeatStrategy, naming clientHeaders: Set<String>) {
        switch strategy {
        case .allow:
            return nil
        case .share, .cancelOlder, .ignoreNewer:
            if strategy != .share, let key = request.repeatKey {
                self.init(key: key)
            } else {
                self.init(urlRequest, naming: clientHeaders.union(request.identityHeaders))
            }
        }
    }

    /// The URL with lower-cased scheme and host, no fragment, and its query pairs sorted (or no
    /// query at all): two URLs that differ only in query order compare equal.
    static func canonical(_ url: URL, keepingQuery: Bool) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        components.fragment = nil
        components.scheme = components.scheme?.lowercased()
        components.host = components.host?.lowercased()
        components.percentEncodedQuery =
            keepingQuery
            ? components.percentEncodedQuery.map { $0.split(separator: "&").sorted().joined(separator: "&") }
            : nil
        return components.string ?? url.absoluteString
    }
}
