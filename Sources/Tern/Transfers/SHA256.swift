import Foundation

/// SHA-256 (FIPS 180-4) in Swift, fed in pieces: the fallback of `Checksum` where the platform
/// has no crypto library Tern can reach, and the reference its tests compare against.
/// Thread safety: a value type; one digest is fed from one thread at a time.
struct SHA256: Sendable {
    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19)
    /// Bytes of an incomplete block, waiting for the rest.
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    init() {}

    /// Adds `data` to the message.
    mutating func update(_ data: Data) {
        data.withUnsafeBytes { update(UnsafeRawBufferPointer($0)) }
    }

    /// Adds `bytes` to the message.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty, let base = bytes.baseAddress else { return }
        length &+= UInt64(bytes.count)
        var offset = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, bytes.count)
            pending.append(contentsOf: UnsafeRawBufferPointer(start: base, count: take))
            offset = take
            guard pending.count == 64 else { return }
            pending.withUnsafeBytes { compress($0.baseAddress!, blocks: 1) }
            pending.removeAll(keepingCapacity: true)
        }
        let blocks = (bytes.count - offset) / 64
        if blocks > 0 { compress(base + offset, blocks: blocks) }
        offset += blocks * 64
        if offset < bytes.count {
            pending.append(contentsOf: UnsafeRawBufferPointer(start: base + offset, count: bytes.count - offset))
        }
    }

    /// The digest's 32 bytes; the value itself is left as it was.
    func digest() -> Data {
        Data(finalWords().flatMap { word in (0..<4).reversed().map { UInt8(truncatingIfNeeded: word >> ($0 * 8)) } })
    }

    /// The digest as 64 lowercase hexadecimal digits; the value itself is left as it was.
    func hexDigest() -> String {
        finalWords().map { word in
            let hex = String(word, radix: 16)
            return String(repeating: "0", count: 8 - hex.count) + hex
        }.joined()
    }

    /// The eight words of the digest: the message so far, padded and finished on a copy.
    private func finalWords() -> [UInt32] {
        var copy = self
        let bits = copy.length &* 8
        var tail: [UInt8] = [0x80]
        let used = Int(copy.length % 64) + 1
        tail += [UInt8](repeating: 0, count: (used <= 56 ? 56 - used : 120 - used))
        tail += (0..<8).reversed().map { UInt8(truncatingIfNeeded: bits >> (UInt64($0) * 8)) }
        copy.length = 0
        tail.withUnsafeBytes { copy.update($0) }
        let s = copy.state
        return [s.0, s.1, s.2, s.3, s.4, s.5, s.6, s.7]
    }

    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    @inline(__always)
    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 - n)) }

    private mutating func compress(_ base: UnsafeRawPointer, blocks: Int) {
        var w = [UInt32](repeating: 0, count: 64)
        var (h0, h1, h2, h3, h4, h5, h6, h7) = state
        Self.k.withUnsafeBufferPointer { k in
            w.withUnsafeMutableBufferPointer { w in
                for block in 0..<blocks {
                    let bytes = base + block * 64
                    for i in 0..<16 {
                        w[i] = UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: i * 4, as: UInt32.self))
                    }
                    for i in 16..<64 {
                        let s0 = Self.rotr(w[i - 15], 7) ^ Self.rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
                        let s1 = Self.rotr(w[i - 2], 17) ^ Self.rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
                        w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
                    }
                    var (a, b, c, d, e, f, g, h) = (h0, h1, h2, h3, h4, h5, h6, h7)
                    for i in 0..<64 {
                        let s1 = Self.rotr(e, 6) ^ Self.rotr(e, 11) ^ Self.rotr(e, 25)
                        let choice = (e & f) ^ (~e & g)
                        let t1 = h &+ s1 &+ choice &+ k[i] &+ w[i]
                        let s0 = Self.rotr(a, 2) ^ Self.rotr(a, 13) ^ Self.rotr(a, 22)
                        let majority = (a & b) ^ (a & c) ^ (b & c)
                        let t2 = s0 &+ majority
                        (h, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
                    }
                    h0 &+= a; h1 &+= b; h2 &+= c; h3 &+= d; h4 &+= e; h5 &+= f; h6 &+= g; h7 &+= h
                }
            }
        }
        state = (h0, h1, h2, h3, h4, h5, h6, h7)
    }
}
