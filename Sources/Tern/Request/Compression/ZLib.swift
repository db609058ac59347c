import Foundation

/// zlib, loaded at run time (`libz.so.1` on Linux, as libcurl and SQLite are, so that building
/// needs no `-dev` package; the system's `libz.1.dylib` on Apple platforms), for compressing
/// request bodies (`compress`) and WebSocket messages both ways (`ZLibCodec`).
struct ZLib: Sendable {
    private typealias DeflateInit =
        @convention(c) (
            UnsafeMutableRawPointer?, Int32, Int32, Int32, Int32, Int32, UnsafePointer<CChar>?, Int32
        ) -> Int32
    typealias Deflate = @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32
    typealias StreamCall = @convention(c) (UnsafeMutableRawPointer?) -> Int32
    typealias InflateInit = @convention(c) (UnsafeMutableRawPointer?, Int32, UnsafePointer<CChar>?, Int32) -> Int32

    private let deflateInit: DeflateInit
    let deflateStep: Deflate
    let deflateEnd: StreamCall
    let deflateReset: StreamCall
    private let inflateInit: InflateInit
    let inflateStep: Deflate
    let inflateEnd: StreamCall
    let inflateReset: StreamCall
    let version: String

    /// The loaded library, or why there is none.
    static let loaded: Result<ZLib, TernError> = Result { () throws(DynamicLibrary.LoadError) in
        #if canImport(Darwin)
        try ZLib(DynamicLibrary(["/usr/lib/libz.1.dylib", "libz.dylib"]))
        #else
        try ZLib(DynamicLibrary(["libz.so.1", "libz.so"]))
        #endif
    }.mapError { .unsupportedConfiguration("compression needs zlib, which could not be loaded (\($0))") }

    private init(_ library: DynamicLibrary) throws(DynamicLibrary.LoadError) {
        deflateInit = try library.function("deflateInit2_")
        deflateStep = try library.function("deflate")
        deflateEnd = try library.function("deflateEnd")
        deflateReset = try library.function("deflateReset")
        inflateInit = try library.function("inflateInit2_")
        inflateStep = try library.function("inflate")
        inflateEnd = try library.function("inflateEnd")
        inflateReset = try library.function("inflateReset")
        let zlibVersion = try library.function("zlibVersion", as: (@convention(c) () -> UnsafePointer<CChar>?).self)
        version = zlibVersion().map { String(cString: $0) } ?? "?"
    }

    /// Starts `stream` deflating (`level`, `windowBits` as zlib takes them: negative for raw
    /// deflate) or inflating; zlib's code (0: started).
    func start(_ stream: UnsafeMutableRawPointer, deflating: Bool, level: Int32, windowBits: Int32) -> Int32 {
        let size = Int32(MemoryLayout<Stream>.size)
        return version.withCString {
            deflating ? deflateInit(stream, level, 8, windowBits, 8, 0, $0, size) : inflateInit(stream, windowBits, $0, size)
        }
    }

    /// zlib's `z_stream`, field for field (zlib checks its size against `stream_size`).
    struct Stream {
        var nextIn: UnsafeMutablePointer<UInt8>?
        var availableIn: UInt32 = 0
        var totalIn: CUnsignedLong = 0
        var nextOut: UnsafeMutablePointer<UInt8>?
        var availableOut: UInt32 = 0
        var totalOut: CUnsignedLong = 0
        var message: UnsafePointer<CChar>?
        var state: OpaquePointer?
        var allocate: OpaquePointer?
        var free: OpaquePointer?
        var opaque: UnsafeMutableRawPointer?
        var dataType: Int32 = 0
        var adler: CUnsignedLong = 0
        var reserved: CUnsignedLong = 0
    }

    /// `data` compressed: with a gzip header and trailer (`gzip`), or a zlib one (`deflate`, the
    /// HTTP content coding of that name, RFC 9110 §8.4.1.2).
    func compress(_ data: Data, gzip: Bool) throws(TernError) -> Data {
        try ZLibCodec(self, deflating: true, windowBits: gzip ? 15 + 16 : 15).finish(data)
    }
}
