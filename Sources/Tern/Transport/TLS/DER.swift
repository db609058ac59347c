import Foundation

/// Just enough DER (X.690) to find a certificate's public key: the SubjectPublicKeyInfo that
/// public-key pins hash. No validation beyond well-formed lengths; the TLS library validates.
enum DER {
    /// The DER bytes of `data`: itself, or the first `CERTIFICATE` block of PEM text.
    static func certificate(from data: Data) throws(CertificateError) -> Data {
        let text = String(decoding: data.prefix(64), as: UTF8.self)
        guard text.contains("-----BEGIN") else { return data }
        let pem = String(decoding: data, as: UTF8.self)
        guard let begin = pem.range(of: "-----BEGIN CERTIFICATE-----"),
            let end = pem.range(of: "-----END CERTIFICATE-----", range: begin.upperBound..<pem.endIndex),
            let der = Data(base64Encoded: pem[begin.upperBound..<end.lowerBound].filter { !$0.isWhitespace })
        else {
            throw CertificateError(description: "no CERTIFICATE block in the PEM text")
        }
        return der
    }

    /// The whole SubjectPublicKeyInfo element (tag, length and contents) of an X.509 certificate.
    static func subjectPublicKeyInfo(ofCertificate der: Data) throws(CertificateError) -> Data {
        let bytes = [UInt8](der)
        // Certificate ::= SEQUENCE { tbsCertificate SEQUENCE { [0] version OPTIONAL, serialNumber,
        //   signature, issuer, validity, subject, subjectPublicKeyInfo, … }, … }
        guard let certificate = element(in: bytes, at: 0), certificate.tag == 0x30,
            let tbs = element(in: bytes, at: certificate.contents.lowerBound), tbs.tag == 0x30
        else {
            throw CertificateError(description: "not an X.509 certificate (DER)")
        }
        var offset = tbs.contents.lowerBound
        var fields: [Element] = []
        while offset < tbs.contents.upperBound, fields.count < 7, let field = element(in: bytes, at: offset) {
            fields.append(field)
            offset = field.whole.upperBound
        }
        let index = fields.first?.tag == 0xA0 ? 6 : 5
        guard fields.count > index, fields[index].tag == 0x30 else {
            throw CertificateError(description: "the certificate has no subjectPublicKeyInfo")
        }
        return Data(bytes[fields[index].whole])
    }

    /// One element: its tag, its whole encoding and its contents.
    struct Element {
        let tag: UInt8
        let whole: Range<Int>
        let contents: Range<Int>
    }

    /// The element starting at `offset`; nil when its length runs past the end.
    static func element(in bytes: [UInt8], at offset: Int) -> Element? {
        guard offset + 2 <= bytes.count else { return nil }
        let tag = bytes[offset]
        var length = Int(bytes[offset + 1])
        var start = offset + 2
        if length & 0x80 != 0 {
            let count = length & 0x7F
            guard count > 0, count <= 4, start + count <= bytes.count else { return nil }
            length = bytes[start..<start + count].reduce(0) { $0 << 8 | Int($1) }
            start += count
        }
        guard start + length <= bytes.count else { return nil }
        return Element(tag: tag, whole: offset..<start + length, contents: start..<start + length)
    }
}
