#if canImport(Glibc) || canImport(Musl)
import Foundation

/// What a `CurlExchange` reads from bytes: its URL's origin, header lines, status lines.
extension CurlExchange {
    /// `scheme://authority` of an absolute URL string, lowercased (Foundation's `URL` accessors
    /// parse and decode on every call); the whole string when it has no authority.
    static func origin(of url: String) -> String {
        var url = url
        // Read in place, and lowercased only when it may need it: one string made, not three.
        return url.withUTF8 { bytes in
            let authority = URLBuilder.authorityRange(bytes)
            let origin = authority.isEmpty ? bytes : UnsafeBufferPointer(rebasing: bytes[..<authority.upperBound])
            let text = String(decoding: origin, as: UTF8.self)
            return origin.contains { ($0 >= 0x41 && $0 <= 0x5A) || $0 >= 0x80 } ? text.lowercased() : text
        }
    }

    /// Header fields by name, a repeated field's values joined with ", " under the name it first
    /// came with (names compared ignoring ASCII case), and whether one of them is `Set-Cookie`.
    /// A head of a few dozen fields is checked for repeats pairwise (no lowercased copies);
    /// a larger one through a table of lowercased names.
    static func joined(_ headers: [(name: String, value: String)]) -> ([String: String], setsCookies: Bool) {
        var fields: [String: String] = [:]
        fields.reserveCapacity(headers.count)
        var setsCookies = false
        if headers.count <= 32 {
            for (index, (name, value)) in headers.enumerated() {
                setsCookies = setsCookies || ResponseHead.sameName(name, "Set-Cookie")
                if let first = headers[..<index].first(where: { ResponseHead.sameName($0.name, name) }) {
                    fields[first.name, default: ""] += ", " + value
                } else {
                    fields[name] = value
                }
            }
            return (fields, setsCookies)
        }
        var names: [String: String] = [:]
        for (name, value) in headers {
            let lowercased = name.lowercased()
            setsCookies = setsCookies || lowercased == "set-cookie"
            if let first = names[lowercased] {
                fields[first, default: ""] += ", " + value
            } else {
                names[lowercased] = name
                fields[name] = value
            }
        }
        return (fields, setsCookies)
    }

    static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A }

    /// The three digits after the first space of a status line; 0 when there are none.
    static func statusCode(_ line: UnsafeBufferPointer<UInt8>) -> Int {
        guard let space = line.firstIndex(of: 0x20) else { return 0 }
        var code = 0
        for byte in line[(space + 1)...].prefix(3) {
            guard (0x30...0x39).contains(byte) else { return 0 }
            code = code * 10 + Int(byte - 0x30)
        }
        return code
    }
}
#endif
