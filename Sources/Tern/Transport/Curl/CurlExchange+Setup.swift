#if canImport(Glibc) || canImport(Musl)
#if canImport(Glibc)
import Glibc
#else
import Musl
#endif
import Foundation

/// Setting an easy handle up for an exchange: what it connects through (TLS, proxy, credential)
/// and what it sends (method and body). Values in, options set; nothing of the exchange's own.
extension CurlExchange {
    /// Applies the transport's TLS, proxy and credential settings for a request to `host`; nil on
    /// success, else why the exchange cannot start.
    static func configureConnection(_ easy: LibCurl.Handle, curl: LibCurl, settings: CurlSettings, host: String?) -> URLError? {
        if settings.tls != .default, let error = configureTLS(easy, curl: curl, tls: settings.tls, host: host) { return error }
        switch settings.proxy.kind {
        case .environment: break
        case .direct: curl.set(easy, .proxy, "")
        case .http(_, _, let excluding), .socks5(_, _, let excluding):
            curl.set(easy, .proxy, settings.proxy.description)
            if !excluding.isEmpty { curl.set(easy, .noProxy, excluding.joined(separator: ",")) }
        }
        if let connectTo = settings.connectTo { curl.set(easy, .connectTo, UnsafeRawPointer(connectTo.list)) }
        if let credential = settings.credential {
            curl.set(easy, .httpAuth, LibCurl.challengedAuth)
            curl.set(easy, .username, credential.user)
            curl.set(easy, .password, credential.password)
        }
        return nil
    }

    /// Sets `method` and `body`; returns the descriptor of a file body, which the exchange reads
    /// and closes (-1 for none; a stream is read from `body`), or why the exchange cannot start. `context` is the exchange,
    /// unretained, for the read, seek and progress callbacks.
    static func configureBody(
        _ easy: LibCurl.Handle, curl: LibCurl, method: String, body: TransportRequest.Body, context: UnsafeMutableRawPointer
    ) -> Result<Int32, URLError> {
        var descriptor: Int32 = -1
        // No body where the method gives one a meaning is sent as an empty one, with
        // `Content-Length: 0` as URLSession does (RFC 9110 §8.6); the request's header list drops
        // the form type libcurl would add to it.
        let sent: TransportRequest.Body = body == .none && CurlSettings.sendsEmptyBody(method) ? .data(Data()) : body
        switch sent {
        case .none:
            if method == "HEAD" { curl.set(easy, .noBody, 1) } else if method == "GET" { curl.set(easy, .httpGet, 1) }
            if method != "GET" && method != "HEAD" { curl.set(easy, .customRequest, method) }
        case .data(let data):
            curl.set(easy, .post, 1)
            curl.set(easy, .postFieldSizeLarge, offset: Int64(data.count))
            if data.isEmpty {
                "".withCString { _ = curl.set(easy, .copyPostFields, UnsafeRawPointer($0)) }
            } else {
                data.withUnsafeBytes { _ = curl.set(easy, .copyPostFields, $0.baseAddress) }
            }
            if method != "POST" { curl.set(easy, .customRequest, method) }
        case .file(let url):
            descriptor = open(url.path, O_RDONLY)
            guard descriptor >= 0 else {
                return .failure(URLError(.fileDoesNotExist, userInfo: [NSLocalizedDescriptionKey: "cannot open \(url.path) to upload it"]))
            }
            var info = stat()
            fstat(descriptor, &info)
            curl.set(easy, .upload, 1)
            curl.set(easy, .inFileSizeLarge, offset: Int64(info.st_size))
            curl.set(easy, .readFunction, unsafeBitCast(CurlCallbacks.read, to: UnsafeRawPointer.self))
            curl.set(easy, .readData, UnsafeRawPointer(context))
            // Rewound when libcurl sends the body again (answering an authentication challenge).
            curl.set(easy, .seekFunction, unsafeBitCast(CurlCallbacks.seek, to: UnsafeRawPointer.self))
            curl.set(easy, .seekData, UnsafeRawPointer(context))
            curl.set(easy, .customRequest, method)
        case .stream(let stream):
            // An unknown length goes chunked on HTTP/1.1 (libcurl's own framing), in DATA frames
            // on HTTP/2. No seek function: libcurl cannot rewind it, and fails rather than resend.
            curl.set(easy, .upload, 1)
            curl.set(easy, .inFileSizeLarge, offset: stream.length ?? -1)
            curl.set(easy, .readFunction, unsafeBitCast(CurlCallbacks.read, to: UnsafeRawPointer.self))
            curl.set(easy, .readData, UnsafeRawPointer(context))
            curl.set(easy, .customRequest, method)
        }
        if body != .none {
            curl.set(easy, .noProgress, 0)
            curl.set(easy, .xferInfoFunction, unsafeBitCast(CurlCallbacks.progress, to: UnsafeRawPointer.self))
            curl.set(easy, .xferInfoData, UnsafeRawPointer(context))
        }
        return .success(descriptor)
    }

    /// Applies `tls` for a request to `host`; nil on success, else why the exchange cannot start.
    private static func configureTLS(_ easy: LibCurl.Handle, curl: LibCurl, tls: TLSConfiguration, host: String?) -> URLError? {
        if let file = tls.certificateAuthorityFile { curl.set(easy, .caInfo, file.path) }
        if let directory = tls.certificateAuthorityDirectory { curl.set(easy, .caPath, directory.path) }
        switch tls.minimumVersion {
        case .v1_2?: curl.set(easy, .sslVersion, LibCurl.tlsVersion1_2)
        case .v1_3?: curl.set(easy, .sslVersion, LibCurl.tlsVersion1_3)
        case nil: break
        }
        if let client = tls.clientCertificate {
            curl.set(easy, .sslCert, client.certificate.path)
            curl.set(easy, .sslKey, client.privateKey.path)
            if let passphrase = client.passphrase { curl.set(easy, .keyPassword, passphrase) }
        }
        guard let host, let pins = tls.pinning.publicKeyPins(for: host) else { return nil }
        // A pinned host whose pins could not be read is refused rather than left unpinned.
        guard !pins.isEmpty else { return TLSFailure.pinMismatch(host: host, detail: "no readable pin for \(host)") }
        curl.set(easy, .pinnedPublicKey, pins.map(\.description).joined(separator: ";"))
        return nil
    }
}
#endif
