#if canImport(Security)
import Foundation
import Security

/// Pinning on Apple platforms: the server-trust challenge of a pinned host is answered only when
/// the system accepts the chain and the server's own certificate matches a pin. Written from
/// Apple's documentation; Linux has no server-trust challenge (pinning there is the libcurl
/// transport's `CURLOPT_PINNEDPUBLICKEY`).
enum ServerTrust {
    /// Whether `trust` passes the system's evaluation and its leaf certificate matches `pins`.
    static func satisfies(_ trust: SecTrust, pins: ServerPinning.Pins) -> Bool {
        guard SecTrustEvaluateWithError(trust, nil), let leaf = leafCertificate(of: trust) else { return false }
        let der = SecCertificateCopyData(leaf) as Data
        switch pins {
        case .none:
            return true
        case .publicKeys(let current, let backups):
            guard let pin = try? PublicKeyPin(certificate: der) else { return false }
            return current.contains(pin) || backups.contains(pin)
        case .certificates(let certificates):
            return certificates.contains { (try? DER.certificate(from: $0)) == der }
        }
    }

    private static func leafCertificate(of trust: SecTrust) -> SecCertificate? {
        if #available(macOS 12, iOS 15, tvOS 15, watchOS 8, *) {
            return (SecTrustCopyCertificateChain(trust) as? [SecCertificate])?.first
        }
        return SecTrustGetCertificateAtIndex(trust, 0)
    }
}
#endif
