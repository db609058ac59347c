import Foundation

/// How a client's connections use TLS: which authorities it trusts, the oldest version it
/// accepts, the certificate it shows, and which server keys it pins.
///
/// Where each setting works:
/// - The libcurl transport (Linux): all of them.
/// - `URLSessionTransport` on Apple platforms: `pinning` (checked in the server-trust challenge)
///   and `minimumVersion`; trusting other authorities and client certificates go through your own
///   `URLSessionDelegate` there.
/// - `URLSessionTransport` on Linux: none — FoundationNetworking offers no hook for any of them.
/// A setting the client's transport cannot honour is never ignored: the client is created with
/// `Client.configurationError` set, and every request it sends fails at once with that
/// `TernError.unsupportedConfiguration`.
/// Thread safety: a value type, safe to share.
public struct TLSConfiguration: Sendable, Equatable {
    /// A TLS protocol version.
    public enum Version: Sendable, Equatable {
        /// TLS 1.2.
        case v1_2
        /// TLS 1.3.
        case v1_3
    }

    /// A certificate the client presents when the server asks for one (mutual TLS).
    public struct ClientCertificate: Sendable, Equatable {
        /// The certificate, a PEM file.
        public var certificate: URL
        /// Its private key, a PEM file.
        public var privateKey: URL
        /// The key's passphrase, if it is encrypted.
        public var passphrase: String?

        /// Creates a client certificate from PEM files.
        public init(certificate: URL, privateKey: URL, passphrase: String? = nil) {
            self.certificate = certificate
            self.privateKey = privateKey
            self.passphrase = passphrase
        }
    }

    /// Trust these authorities (a PEM bundle) instead of the system's. Default nil.
    public var certificateAuthorityFile: URL?
    /// Trust the authorities in this directory (OpenSSL hashed names) instead of the system's.
    /// Default nil.
    public var certificateAuthorityDirectory: URL?
    /// The oldest TLS version accepted. Default nil: the TLS library's own floor.
    public var minimumVersion: Version?
    /// The certificate shown to servers that ask. Default nil.
    public var clientCertificate: ClientCertificate?
    /// The servers' keys or certificates to insist on, per host. Default `.none`: nothing pinned.
    public var pinning: ServerPinning

    /// Creates a TLS configuration; every parameter defaults to the documented default.
    public init(
        certificateAuthorityFile: URL? = nil, certificateAuthorityDirectory: URL? = nil, minimumVersion: Version? = nil,
        clientCertificate: ClientCertificate? = nil, pinning: ServerPinning = .none
    ) {
        self.certificateAuthorityFile = certificateAuthorityFile
        self.certificateAuthorityDirectory = certificateAuthorityDirectory
        self.minimumVersion = minimumVersion
        self.clientCertificate = clientCertificate
        self.pinning = pinning
    }

    /// The system's authorities, no pins, no client certificate.
    public static let `default` = TLSConfiguration()

    /// Why `URLSessionTransport` on this platform cannot honour it; nil when it can.
    var unsupportedByURLSession: String? {
        #if canImport(Security)
        if certificateAuthorityFile != nil || certificateAuthorityDirectory != nil {
            return "URLSessionTransport cannot trust other certificate authorities (use a URLSessionDelegate)"
        }
        if clientCertificate != nil { return "URLSessionTransport cannot present a client certificate (use a URLSessionDelegate)" }
        return nil
        #else
        guard self != .default else { return nil }
        return "TLS settings (pinning, authorities, minimum version, client certificate) need the libcurl transport on Linux: "
            + "FoundationNetworking's URLSession has no hook for them"
        #endif
    }
}

/// How transports report TLS failures Tern turns into its own errors.
enum TLSFailure {
    /// The `URLError` user-info key naming the host whose certificate matched no pin.
    static let pinnedHostKey = "TernPinnedHost"

    /// A server certificate for `host` that matched none of its pins.
    static func pinMismatch(host: String, detail: String? = nil) -> URLError {
        URLError(
            .serverCertificateUntrusted,
            userInfo: [
                NSLocalizedDescriptionKey: detail ?? "the certificate of \(host) matches none of its pins",
                pinnedHostKey: host,
            ])
    }
}
