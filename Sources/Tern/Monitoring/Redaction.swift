import Foundation

/// Which headers and query parameters are secrets: replaced by `<redacted>` in logs, cURL
/// commands and the descriptions of errors, responses and handles.
///
/// On by default, everywhere: `Authorization`, `Proxy-Authorization`, `Cookie`, `Set-Cookie` and
/// the query (and form) parameters `token`, `access_token`, `refresh_token`, `id_token`,
/// `password`, `passwd`, `secret`, `client_secret`, `api_key`, `apikey`, `key`, `sign`,
/// `signature`, `session`, `sid`. Add names of your own; turn it off only on purpose
/// (`Redaction.shared = .none`, or one logger's `redaction`). Names compare case-insensitively.
/// Thread safety: a value type; `shared` is read and written under a lock.
public struct Redaction: Sendable, Equatable {
    /// Header names whose values are hidden.
    public var headerNames: Set<String>
    /// Query and form parameter names whose values are hidden.
    public var parameterNames: Set<String>

    /// A redaction of these names (compared case-insensitively).
    public init(headerNames: Set<String>, parameterNames: Set<String>) {
        self.headerNames = Set(headerNames.map { $0.lowercased() })
        self.parameterNames = Set(parameterNames.map { $0.lowercased() })
    }

    /// The default names listed above.
    public static let standard = Redaction(
        headerNames: ["authorization", "proxy-authorization", "cookie", "set-cookie"],
        parameterNames: [
            "token", "access_token", "refresh_token", "id_token", "password", "passwd", "secret", "client_secret",
            "api_key", "apikey", "key", "sign", "signature", "session", "sid",
        ])

    /// Hides nothing.
    public static let none = Redaction(headerNames: [], parameterNames: [])

    private static let current = Locked(Redaction.standard)

    /// What descriptions and loggers use unless told otherwise; `.standard` by default.
    public static var shared: Redaction {
        get { current.withLock { $0 } }
        set { current.withLock { $0 = newValue } }
    }

    /// What a hidden value is replaced with.
    public static let placeholder = "<redacted>"

    /// Whether `name`'s header value is hidden.
    public func hidesHeader(_ name: String) -> Bool { headerNames.contains(name.lowercased()) }

    /// The headers with secret values replaced.
    public func headers(_ headers: [String: String]) -> [String: String] {
        guard !headerNames.isEmpty else { return headers }
        var shown = headers
        for name in headers.keys where hidesHeader(name) { shown[name] = Self.placeholder }
        return shown
    }

    /// The URL as text with the values of secret query parameters (and any password) replaced.
    public func url(_ url: URL?) -> String {
        guard let url else { return "(no URL)" }
        var text = url.absoluteString
        if let password = url.password, !parameterNames.isEmpty || !headerNames.isEmpty {
            text = text.replacingOccurrences(of: ":" + password + "@", with: ":" + Self.placeholder + "@")
        }
        // Edited as text: `<redacted>` is not a character a URL's query may hold.
        guard !parameterNames.isEmpty, let question = text.firstIndex(of: "?") else { return text }
        let fragment = text[question...].firstIndex(of: "#") ?? text.endIndex
        let query = String(text[text.index(after: question)..<fragment])
        return String(text[...question]) + self.query(query) + String(text[fragment...])
    }

    /// A percent-encoded `a=1&b=2` query or form body with secret values replaced.
    public func query(_ query: String) -> String {
        guard !parameterNames.isEmpty else { return query }
        return query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = String(pair[..<equals])
            let decoded = (name.removingPercentEncoding ?? name).lowercased()
            // `user[password]`, `password[]` and `password[0]` count as `password`: any part of
            // a bracketed name that is secret hides the value.
            let parts = decoded.split(whereSeparator: { $0 == "[" || $0 == "]" })
            let hidden = parameterNames.contains(decoded) || parts.contains { parameterNames.contains(String($0)) }
            return hidden ? name + "=" + Self.placeholder : String(pair)
        }.joined(separator: "&")
    }

    /// The headers with secret values replaced, sorted by name (case-insensitively), for display.
    func sortedHeaders(_ headers: [String: String]) -> [(name: String, value: String)] {
        self.headers(headers).sorted { $0.key.lowercased() < $1.key.lowercased() }.map { ($0.key, $0.value) }
    }

    /// `body` as text with secret values replaced: a form body pair by pair (`query`), anything
    /// else as `body(_:)` does.
    func body(_ body: Data, contentType: String?) -> String {
        let text = String(decoding: body, as: UTF8.self)
        return contentType?.hasPrefix("application/x-www-form-urlencoded") == true ? query(text) : self.body(text)
    }

    /// A body shown as text (a log line, an error's preview) with the values of secret names
    /// replaced: JSON string and number values (`"token": "…"`) and form pairs (`token=…`).
    public func body(_ text: String) -> String {
        guard !parameterNames.isEmpty else { return text }
        var result = text
        if text.contains("=") && !text.contains("{") { result = query(text) }
        for name in parameterNames where result.range(of: "\"\(name)\"", options: .caseInsensitive) != nil {
            let pattern = "(\"\(NSRegularExpression.escapedPattern(for: name))\"\\s*:\\s*)(\"(?:[^\"\\\\]|\\\\.)*\"|[-0-9.eE+]+)"
            guard let expression = try? NSRegularExpression(pattern: pattern, options: .caseInsensitive) else { continue }
            result = expression.stringByReplacingMatches(
                in: result, range: NSRange(result.startIndex..., in: result),
                withTemplate: "$1\"\(Self.placeholder)\"")
        }
        return result
    }

    /// Replaces every secret-looking URL inside free text (an error's description).
    func text(_ text: String) -> String {
        guard !parameterNames.isEmpty, text.contains("?") else { return text }
        var result = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: false) {
            if !result.isEmpty { result += " " }
            if word.contains("://"), word.contains("?"), let url = URL(string: String(word)) {
                result += self.url(url)
            } else {
                result += word
            }
        }
        return result
    }
}
