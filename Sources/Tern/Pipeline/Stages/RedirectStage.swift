import Foundation

/// What to do about an attempt's redirect response.
enum RedirectStep: Sendable {
    /// Send this request as the next attempt; record the redirect.
    case follow(URLRequest, Redirect)
    /// End the request with this error.
    case refuse(TernError)
}

/// The redirect stage (per exchange): whether an attempt's response is a redirect to follow, and
/// the request that follows it — the method a 301/302/303 changes, credentials and sensitive
/// headers dropped for another origin, refusals for a downgrade, another scheme or too many.
struct RedirectStage: Sendable {
    let policy: RedirectPolicy

    /// Whether `status` is a redirect status (301, 302, 303, 307 or 308).
    static func isRedirect(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }

    /// The step a redirect response to `current` (after `followed` redirects) calls for, or nil
    /// when `raw` is not a redirect to follow (not 301/302/303/307/308, no usable `Location`, or
    /// the policy does not follow).
    func step(after raw: RawResponse, to current: URLRequest, followed: Int) -> RedirectStep? {
        let status = raw.head.statusCode
        guard Self.isRedirect(status) else { return nil }
        guard policy.follows, let location = raw.head.value(forHTTPHeaderField: "Location") else { return nil }
        guard let from = current.url else { return nil }
        // A `Location` that is not a URL (or an http one without a host) cannot be followed: the
        // 3xx is the final response, as curl and browsers take it. A URL of another scheme is
        // refused as a redirect.
        guard let target = URL(string: location, relativeTo: from)?.absoluteURL, let scheme = target.scheme?.lowercased() else {
            return nil
        }
        let isHTTP = scheme == "http" || scheme == "https"
        if isHTTP, target.host?.isEmpty != false { return nil }
        guard isHTTP else { return .refuse(.redirectFailed(.invalidLocation(location, from: from))) }
        guard followed < policy.limit else {
            return .refuse(.redirectFailed(.tooMany(limit: policy.limit, url: from)))
        }
        if from.scheme?.lowercased() == "https", scheme == "http", !policy.allowsInsecureDowngrade {
            return .refuse(.redirectFailed(.insecureDowngrade(from: from, to: target)))
        }
        var next = current
        next.url = target
        let method = (current.httpMethod ?? "GET").uppercased()
        if (status == 303 && method != "HEAD") || ((status == 301 || status == 302) && method == "POST") {
            next.httpMethod = "GET"
            next.httpBody = nil
            for header in ["Content-Type", "Content-Length", "Content-Encoding"] { next.setValue(nil, forHTTPHeaderField: header) }
        }
        if !Self.sameOrigin(from, target) {
            let dropped = RedirectPolicy.credentialHeaders.union(policy.sensitiveHeaders.map { $0.lowercased() })
            for name in (next.allHTTPHeaderFields ?? [:]).keys where dropped.contains(name.lowercased()) {
                next.setValue(nil, forHTTPHeaderField: name)
            }
        }
        return .follow(next, Redirect(statusCode: status, from: from, to: target))
    }

    /// Same scheme, host and port (default ports made explicit).
    static func sameOrigin(_ a: URL, _ b: URL) -> Bool { origin(of: a) == origin(of: b) }

    /// `scheme://host:port`, lowercased, the default port made explicit: what `sameOrigin` compares.
    static func origin(of url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(url.port ?? (scheme == "https" ? 443 : 80))"
    }
}
