import Foundation

/// Which servers' public keys (or certificates) a client insists on, per host: certificate
/// pinning, checked after the usual chain validation, before anything is sent.
///
/// ```swift
/// $0.tls.pinning = ServerPinning(["api.example.com": .publicKeys([current], backups: [next])])
/// ```
/// A host is looked up exactly, then as `*.` + its parent domains (`*.example.com` covers
/// `a.example.com` and `a.b.example.com`, not `example.com`); `.none` for a host exempts it from
/// a wildcard. Hosts without an entry are not pinned. Only the server's own (leaf) certificate is
/// compared, as libcurl does. A server that matches no pin fails the request with
/// `TernError.pinningFailed(host:)`, which is never retried.
/// Thread safety: a value type, safe to share.
public struct ServerPinning: Sendable, Equatable {
    /// What one host must present.
    public enum Pins: Sendable, Equatable {
        /// Nothing: the usual validation only.
        case none
        /// One of these public keys (SHA-256 of the SubjectPublicKeyInfo): the current ones and
        /// backups to roll over to. Any one matching is enough.
        case publicKeys([PublicKeyPin], backups: [PublicKeyPin] = [])
        /// One of these certificates (DER or PEM). The libcurl transport compares their public
        /// keys (so a renewed certificate with the same key still matches); Apple platforms
        /// compare the whole certificate.
        case certificates([Data])
    }

    /// The pins per host name (lowercased when looked up), wildcards as `*.example.com`.
    public var hosts: [String: Pins]

    /// Pins per host.
    public init(_ hosts: [String: Pins]) {
        self.hosts = Dictionary(hosts.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// Nothing pinned.
    public static let none = ServerPinning([:])

    /// What `host` must present.
    public func pins(for host: String) -> Pins {
        let host = host.lowercased()
        if let pins = hosts[host] { return pins }
        var labels = host.split(separator: ".")
        while labels.count > 1 {
            labels.removeFirst()
            if let pins = hosts["*." + labels.joined(separator: ".")] { return pins }
        }
        return .none
    }

    /// The public keys `host` may present, certificates turned into their keys; nil when the
    /// host is not pinned, empty when no pin could be read.
    func publicKeyPins(for host: String) -> [PublicKeyPin]? {
        switch pins(for: host) {
        case .none: nil
        case .publicKeys(let current, let backups): current + backups
        case .certificates(let certificates): certificates.compactMap { try? PublicKeyPin(certificate: $0) }
        }
    }
}

/// A pinned public key: the SHA-256 of a DER SubjectPublicKeyInfo, the form HPKP and libcurl's
/// `sha256//` pins use (`openssl x509 -pubkey | openssl pkey -pubin -outform der | openssl dgst
/// -sha256 -binary | base64`).
/// Thread safety: a value type, safe to share.
public struct PublicKeyPin: Sendable, Hashable, CustomStringConvertible {
    /// The 32 bytes of the hash.
    public let sha256: Data

    /// A pin from its base64 hash, with or without libcurl's `sha256//` prefix; nil unless it is
    /// 32 bytes of base64.
    public init?(_ base64: String) {
        let text = base64.hasPrefix("sha256//") ? String(base64.dropFirst(8)) : base64
        guard let hash = Data(base64Encoded: text), hash.count == 32 else { return nil }
        sha256 = hash
    }

    /// The pin of the public key inside `certificate` (DER, or PEM text).
    /// - Throws: `CertificateError` when it is not an X.509 certificate.
    public init(certificate: Data) throws(CertificateError) {
        var digest = SHA256()
        digest.update(try DER.subjectPublicKeyInfo(ofCertificate: DER.certificate(from: certificate)))
        sha256 = digest.digest()
    }

    /// `sha256//` + the base64 hash, as libcurl and HPKP write it.
    public var description: String { "sha256//" + sha256.base64EncodedString() }
}

/// A certificate Tern could not read.
/// Thread safety: a value type, safe to share.
public struct CertificateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with it.
    public let description: String
}
