import Foundation
import TernCache

// tern-cache-writer DIR SEED: writes to the disk cache in DIR until it is killed, for the
// crash-safety tests (Tests/TernCacheTests/CrashSafetyTests.swift), which SIGKILL it at random
// moments and check the store after each kill.
//
// Every value can be checked on its own: its extended data is "<version> <size>", and its bytes are
// `CrashPattern.bytes(version:size:)`, so a reader can tell a whole value from a torn one. Sizes
// straddle the inline threshold; some writes replace, remove or trim.

enum CrashPattern {
    /// Byte i of a value written as `version` is (i * 7 + version) % 251.
    static func bytes(version: Int, size: Int) -> Data {
        var data = Data(count: size)
        data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            for index in 0..<size { buffer[index] = UInt8((index &* 7 &+ version) % 251) }
        }
        return data
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let seed = UInt64(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: tern-cache-writer DIR SEED\n".utf8))
    exit(2)
}
var random = seed | 1
@MainActor func next(_ bound: Int) -> Int {
    // xorshift64: reproducible from the seed.
    random ^= random << 13
    random ^= random >> 7
    random ^= random << 17
    return Int(random % UInt64(bound))
}

do {
    let cache = try DiskCache.open(URL(fileURLWithPath: arguments[1]))
    let threshold = cache.configuration.inlineThreshold
    let sizes = [0, 1, 100, threshold - 1, threshold, threshold + 1, 40_000, 300_000]
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    var version = Int(seed % 1_000) * 1_000_000
    while true {
        version += 1
        let key = "key-\(next(48))"
        switch next(100) {
        case 0..<6: try cache.removeData(forKey: key)
        case 6..<8: try cache.trim(toCount: 32)
        case 8..<60: _ = try cache.data(forKey: key)
        default:
            let size = sizes[next(sizes.count)]
            try cache.setData(CrashPattern.bytes(version: version, size: size), forKey: key, extendedData: Data("\(version) \(size)".utf8))
        }
    }
} catch {
    FileHandle.standardError.write(Data("tern-cache-writer: \(error)\n".utf8))
    exit(1)
}
