#if canImport(CommonCrypto)
import CommonCrypto
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// A SHA-256 fed as a download's bytes arrive: the platform's crypto library where there is one
/// (CommonCrypto on Apple platforms; on Linux the OpenSSL `libcrypto` that FoundationNetworking
/// already loads, found at run time), else Tern's own `SHA256`.
///
/// The checksum runs on the transport's event thread, so its speed matters: Tern's own code hashes
/// about 250 MB/s in a release build but 8 MB/s in a debug build, which would hold up every other
/// transfer of the client (and let URLSession buffer the body in memory meanwhile); `libcrypto`
/// hashes faster than loopback delivers.
/// Thread safety: fed from one thread at a time (the download's state lock).
// Sendable: the system context is owned by this value's box and only touched under the
// download's lock, one call at a time.
struct Checksum: @unchecked Sendable {
    private var own: SHA256?
    private let system: SystemSHA256?

    init() {
        system = SystemSHA256.make()
        own = system == nil ? SHA256() : nil
    }

    /// Adds `data` to the message.
    mutating func update(_ data: Data) {
        if let system { system.update(data) } else { own?.update(data) }
    }

    /// The digest as 64 lowercase hexadecimal digits.
    func hexDigest() -> String {
        system?.hexDigest() ?? own?.hexDigest() ?? ""
    }

    /// Which implementation hashes: "CommonCrypto", "libcrypto" or "Tern".
    var implementation: String { system?.name ?? "Tern" }

    /// The SHA-256 of the file at `url` (a download resumed from bytes an earlier run wrote).
    static func hexDigest(ofFile url: URL) throws -> String {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var digest = Checksum()
        while true {
            let chunk = handle.readData(ofLength: 1 << 20)
            if chunk.isEmpty { break }
            digest.update(chunk)
        }
        return digest.hexDigest()
    }
}

/// SHA-256 from the platform's crypto library; `make()` is nil where there is none.
final class SystemSHA256 {
    let name: String
    #if canImport(CommonCrypto)
    private var context = CC_SHA256_CTX()

    private init() {
        name = "CommonCrypto"
        CC_SHA256_Init(&context)
    }

    static func make() -> SystemSHA256? { SystemSHA256() }

    func update(_ data: Data) {
        data.withUnsafeBytes { _ = CC_SHA256_Update(&context, $0.baseAddress, CC_LONG($0.count)) }
    }

    func hexDigest() -> String {
        var copy = context
        var digest = [UInt8](repeating: 0, count: Int(CC_SHA256_DIGEST_LENGTH))
        CC_SHA256_Final(&digest, &copy)
        return digest.map { String(format: "%02x", $0) }.joined()
    }
    #else
    private let library: LibCrypto
    private let context: OpaquePointer

    private init(library: LibCrypto, context: OpaquePointer) {
        name = "libcrypto"
        self.library = library
        self.context = context
    }

    deinit { library.free(context) }

    static func make() -> SystemSHA256? {
        guard let library = LibCrypto.shared, let context = library.new() else { return nil }
        guard library.initialize(context, library.sha256(), nil) == 1 else {
            library.free(context)
            return nil
        }
        return SystemSHA256(library: library, context: context)
    }

    func update(_ data: Data) {
        data.withUnsafeBytes { _ = library.update(context, $0.baseAddress, $0.count) }
    }

    func hexDigest() -> String {
        // Finishing a copy leaves this context able to go on.
        guard let copy = library.new() else { return "" }
        defer { library.free(copy) }
        var digest = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        guard library.copy(copy, context) == 1, library.final(copy, &digest, &length) == 1 else { return "" }
        return digest.prefix(Int(length)).map { String(format: "%02x", $0) }.joined()
    }
    #endif
}

#if !canImport(CommonCrypto)
/// The few OpenSSL EVP functions Tern needs, looked up at run time: `libcrypto` is always
/// present where FoundationNetworking runs (its libcurl links it), its headers are not.
/// Thread safety: immutable after loading; the functions are thread-safe on separate contexts.
struct LibCrypto: Sendable {
    typealias New = @convention(c) () -> OpaquePointer?
    typealias Free = @convention(c) (OpaquePointer?) -> Void
    typealias Algorithm = @convention(c) () -> OpaquePointer?
    typealias Initialize = @convention(c) (OpaquePointer?, OpaquePointer?, OpaquePointer?) -> Int32
    typealias Update = @convention(c) (OpaquePointer?, UnsafeRawPointer?, Int) -> Int32
    typealias Final = @convention(c) (OpaquePointer?, UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt32>?) -> Int32
    typealias Copy = @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32

    let new: New
    let free: Free
    let sha256: Algorithm
    let initialize: Initialize
    let update: Update
    let final: Final
    let copy: Copy

    /// The library, loaded once; nil when no `libcrypto` (3 or 1.1) can be opened.
    static let shared: LibCrypto? = ["libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so"].lazy.compactMap {
        try? LibCrypto(DynamicLibrary([$0]))
    }.first

    private init(_ library: DynamicLibrary) throws(DynamicLibrary.LoadError) {
        new = try library.function("EVP_MD_CTX_new")
        free = try library.function("EVP_MD_CTX_free")
        sha256 = try library.function("EVP_sha256")
        initialize = try library.function("EVP_DigestInit_ex")
        update = try library.function("EVP_DigestUpdate")
        final = try library.function("EVP_DigestFinal_ex")
        copy = try library.function("EVP_MD_CTX_copy_ex")
    }
}
#endif
