import Foundation

/// Internationalized host names in their ASCII form, the same on every transport: `http://例子.测试/`
/// is sent to `xn--fsqu00a.xn--0zwm56d`.
///
/// Each label that is not ASCII is mapped as UTS 46 does for the common cases (case folded to
/// lower case, Unicode NFC), then Punycode-encoded (RFC 3492) behind `xn--`. The ideographic and
/// full-width full stops (`。`, `．`, `｡`) separate labels like `.`, as users type them. A host that
/// cannot be converted (an empty or over-long label, more than 253 bytes) is refused with
/// `.invalidRequest(.malformedURL)`.
enum IDNA {
    /// `url` with the host of its authority in ASCII form; the rest (path, query) is left for
    /// percent-encoding. Only called for a URL string that has non-ASCII bytes somewhere.
    static func withASCIIHost(_ url: String) throws(TernError) -> String {
        let bytes = Array(url.utf8)
        let authority = URLBuilder.authorityRange(bytes)
        guard !authority.isEmpty, bytes[authority].contains(where: { $0 >= 0x80 }) else { return url }
        let text = String(decoding: bytes[authority], as: UTF8.self)
        // userinfo@host:port — the host is between the last "@" and the port's ":".
        let userInfoEnd = text.lastIndex(of: "@").map { text.index(after: $0) } ?? text.startIndex
        let hostAndPort = text[userInfoEnd...]
        let portStart = hostAndPort.hasPrefix("[") ? nil : hostAndPort.lastIndex(of: ":")
        let host = hostAndPort[..<(portStart ?? hostAndPort.endIndex)]
        guard let ascii = asciiHost(String(host)) else { throw .invalidRequest(.malformedURL(url)) }
        let converted = String(text[..<userInfoEnd]) + ascii + String(hostAndPort[(portStart ?? hostAndPort.endIndex)...])
        return String(decoding: bytes[..<authority.lowerBound], as: UTF8.self) + converted
            + String(decoding: bytes[authority.upperBound...], as: UTF8.self)
    }

    /// The ASCII form of a host name, or nil when it cannot be converted.
    static func asciiHost(_ host: String) -> String? {
        let separators: Set<Character> = [".", "\u{3002}", "\u{FF0E}", "\u{FF61}"]
        var labels: [String] = []
        for label in host.split(omittingEmptySubsequences: false, whereSeparator: { separators.contains($0) }) {
            if label.unicodeScalars.allSatisfy(\.isASCII) {
                labels.append(label.lowercased())
                continue
            }
            let mapped = label.lowercased().precomposedStringWithCanonicalMapping
            guard let encoded = punycode(mapped) else { return nil }
            labels.append("xn--" + encoded)
        }
        // A trailing dot (a fully qualified name) leaves one empty label at the end.
        let inner = labels.last == "" ? labels.dropLast() : labels[...]
        guard !inner.isEmpty, inner.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 63 }) else { return nil }
        let result = labels.joined(separator: ".")
        return result.utf8.count <= 253 ? result : nil
    }

    /// RFC 3492 Punycode of `label`; nil on overflow.
    static func punycode(_ label: String) -> String? {
        let (base, tMin, tMax, skew, damp) = (36, 1, 26, 38, 700)
        let scalars = label.unicodeScalars.map { Int($0.value) }
        var output = scalars.filter { $0 < 0x80 }.map { Character(Unicode.Scalar(UInt8($0))) }
        let basicCount = output.count
        if basicCount > 0 { output.append("-") }
        func digit(_ value: Int) -> Character {
            Character(Unicode.Scalar(UInt8(value < 26 ? value + 97 : value - 26 + 48)))  // a–z, 0–9
        }
        func adapt(_ delta: Int, _ count: Int, _ first: Bool) -> Int {
            var delta = first ? delta / damp : delta / 2
            delta += delta / count
            var k = 0
            while delta > ((base - tMin) * tMax) / 2 {
                delta /= base - tMin
                k += base
            }
            return k + (base - tMin + 1) * delta / (delta + skew)
        }
        var (n, delta, bias, handled) = (0x80, 0, 72, basicCount)
        while handled < scalars.count {
            guard let next = scalars.filter({ $0 >= n }).min() else { return nil }
            let (step, overflow) = (next - n).multipliedReportingOverflow(by: handled + 1)
            guard !overflow, delta <= Int(Int32.max) - step else { return nil }
            delta += step
            n = next
            for scalar in scalars {
                if scalar < n { delta += 1 }
                guard scalar == n else { continue }
                var q = delta
                var k = base
                while true {
                    let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                    if q < t { break }
                    output.append(digit(t + (q - t) % (base - t)))
                    q = (q - t) / (base - t)
                    k += base
                }
                output.append(digit(q))
                bias = adapt(delta, handled + 1, handled == basicCount)
                delta = 0
                handled += 1
            }
            delta += 1
            n += 1
        }
        return String(output)
    }
}
