#if canImport(Glibc) || canImport(Musl)
import Foundation

/// What every exchange of one `CurlTransport` is set up with, from its `TransportSettings`.
struct CurlSettings: Sendable {
    /// Headers an exchange carries unless its request sets them (`User-Agent`, …).
    let headers: [String: String]
    /// Answers Basic (and Digest) challenges; without it a 401 comes back as it is.
    let credential: BasicCredential?
    /// Where cookies come from and go.
    let cookies: HTTPCookieStorage
    /// Authorities, TLS floor, client certificate and pins.
    let tls: TLSConfiguration
    /// The proxy, if not the environment's.
    let proxy: ProxyConfiguration
    /// The header lines of an exchange whose request sets no header and gets no cookie: `headers`
    /// as libcurl sends them, built once and shared by every such exchange. Nil if libcurl could
    /// not build it (then each exchange builds its own).
    let plainHeaders: CurlHeaderList?
    /// `hostOverrides` as `CURLOPT_CONNECT_TO` lines; nil without overrides.
    let connectTo: CurlStringList?

    init(_ settings: TransportSettings, curl: LibCurl) {
        var headers = settings.wireHeaders
        // zstd too where this libcurl decodes it, unless the app chose its own encodings.
        if curl.decodesZstd, headers["Accept-Encoding"] == TransportSettings.defaultAcceptEncoding {
            headers["Accept-Encoding"] = TransportSettings.defaultAcceptEncoding + ", zstd"
        }
        self.headers = headers
        credential = settings.credential
        cookies = settings.cookieStorage ?? .shared
        tls = settings.tls
        proxy = settings.proxy
        plainHeaders = CurlHeaderList(headers, curl: curl)
        connectTo = settings.hostOverrides.isEmpty ? nil : CurlStringList(settings.hostOverrides.curlLines, curl: curl)
    }

    /// Whether a request with `method` and no body is sent with an empty one (`Content-Length: 0`):
    /// the methods whose body has a meaning (RFC 9110 §8.6), as URLSession sends them.
    static func sendsEmptyBody(_ method: String) -> Bool {
        method == "POST" || method == "PUT" || method == "PATCH"
    }

    /// The header lines for `urlRequest`: its own headers over the client's, and cookies from the
    /// client's storage unless it sets `Cookie` itself (as URLSession handles them). A request
    /// with neither shares the client's list, built once. With `emptyBody`, and no type of its
    /// own, the request is sent without the form type libcurl gives a body.
    func headerList(for urlRequest: URLRequest, emptyBody: Bool, curl: LibCurl) -> CurlHeaderList? {
        let own = urlRequest.allHTTPHeaderFields ?? [:]
        var stored: [HTTPCookie] = []
        if urlRequest.httpShouldHandleCookies, let requestURL = urlRequest.url,
            !own.keys.contains(where: { ResponseHead.sameName($0, "Cookie") })
        {
            stored = cookies.cookies(for: requestURL) ?? []
        }
        let removed = emptyBody && !own.keys.contains(where: { ResponseHead.sameName($0, "Content-Type") }) ? ["Content-Type"] : []
        if own.isEmpty, stored.isEmpty, removed.isEmpty, let plainHeaders { return plainHeaders }
        var fields = own
        var named = Dictionary(fields.keys.map { ($0.lowercased(), $0) }, uniquingKeysWith: { first, _ in first })
        for (name, value) in headers where named[name.lowercased()] == nil {
            fields[name] = value
            named[name.lowercased()] = name
        }
        if !stored.isEmpty { fields.merge(HTTPCookie.requestHeaderFields(with: stored)) { own, _ in own } }
        return CurlHeaderList(fields, removing: removed, curl: curl)
    }
}

/// Request headers as libcurl takes them: a `curl_slist` of header lines, and the
/// `Accept-Encoding` given apart (libcurl decodes what it advertises, so it sends that header
/// itself). libcurl only reads the list, so one can serve many transfers at once.
/// Thread safety: immutable once made.
// Sendable: the list is never changed after `init`; libcurl reads it, on the loop thread, only
// while a transfer that holds this object runs.
final class CurlHeaderList: @unchecked Sendable {
    /// The `curl_slist`, freed with this object.
    let list: LibCurl.Handle
    /// The value for `CURLOPT_ACCEPT_ENCODING`: the header's, or "" (all libcurl supports).
    let acceptEncoding: String
    private let curl: LibCurl

    /// The lines for `fields` ("Name: value", sorted by name), after an empty `Expect:`: no
    /// `Expect: 100-continue` round trip for bodies, as URLSession sends none. The headers named in
    /// `removing` are ones libcurl would add itself and must not send. Nil if libcurl fails to
    /// allocate a line.
    init?(_ fields: [String: String], removing: [String] = [], curl: LibCurl) {
        var fields = fields
        let encodingName = fields.keys.first { ResponseHead.sameName($0, "Accept-Encoding") }
        acceptEncoding = encodingName.flatMap { fields.removeValue(forKey: $0) } ?? ""
        guard var list = curl.slistAppend(nil, "Expect:") else { return nil }
        func append(_ line: String) -> Bool {
            guard let longer = curl.slistAppend(list, line) else { return false }
            list = longer
            return true
        }
        // "Name:" drops a header libcurl adds; an empty value would too, so "Name;" sends it empty.
        var appended = removing.allSatisfy { append("\($0):") }
        for (name, value) in fields.sorted(by: { $0.key < $1.key }) where appended {
            appended = append(value.isEmpty ? "\(name);" : "\(name): \(value)")
        }
        guard appended else {
            curl.slistFreeAll(list)
            return nil
        }
        self.list = list
        self.curl = curl
    }

    deinit {
        curl.slistFreeAll(list)
    }
}
/// A `curl_slist` of strings for an option that takes one (`CURLOPT_CONNECT_TO`), freed with
/// this object. Thread safety: immutable once made.
// Sendable: never changed after `init`; libcurl only reads it while a transfer that holds it runs.
final class CurlStringList: @unchecked Sendable {
    let list: LibCurl.Handle
    private let curl: LibCurl

    /// Nil for no lines, or if libcurl fails to allocate one.
    init?(_ lines: [String], curl: LibCurl) {
        var list: LibCurl.Handle?
        for line in lines {
            guard let longer = curl.slistAppend(list, line) else {
                curl.slistFreeAll(list)
                return nil
            }
            list = longer
        }
        guard let list else { return nil }
        self.list = list
        self.curl = curl
    }

    deinit { curl.slistFreeAll(list) }
}
#endif
