import Foundation

extension URLRequest {
    /// This request as a `curl` command line to paste into a terminal, with secrets redacted
    /// (`Redaction.shared` unless another is given): method, URL, headers and body.
    public func curlCommand(redaction: Redaction = Redaction.shared) -> String {
        var parts = ["curl"]
        let method = httpMethod ?? "GET"
        if method != "GET" { parts.append("-X \(method)") }
        parts.append(Self.quoted(redaction.url(url)))
        for (name, value) in redaction.sortedHeaders(allHTTPHeaderFields ?? [:]) {
            parts.append("-H " + Self.quoted("\(name): \(value)"))
        }
        if let body = httpBody, !body.isEmpty {
            parts.append("--data-binary " + Self.quoted(redaction.body(body, contentType: value(forHTTPHeaderField: "Content-Type"))))
        }
        return parts.joined(separator: " \\\n  ")
    }

    /// `text` in single quotes for a POSIX shell.
    private static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}

extension Client {
    /// `request` as this client would send it (group settings, parameter and URL hooks applied;
    /// adapters, which run per attempt, are not) as a `curl` command line, secrets redacted.
    /// - Throws: `TernError.invalidRequest` when the request cannot be built.
    public func curlCommand<Value>(
        for request: some RequestConvertible<Value>, redaction: Redaction = Redaction.shared
    ) throws(TernError) -> String {
        try RequestBuilder.makeURLRequest(request.makeRequest(), client: self).curlCommand(redaction: redaction)
    }
}
