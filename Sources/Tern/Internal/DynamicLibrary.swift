#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A system C library opened at run time (`dlopen`), and its functions looked up by name
/// (`dlsym`): how Tern uses libcurl, libcrypto and zlib without their headers or development
/// packages at build time. Each library's Swift face (`LibCurl`, `LibCrypto`, `ZLib`) keeps
/// only the typed function pointers it looked up, which are `Sendable`; the library stays open
/// for the life of the process.
/// Thread safety: used while one library loads, from one thread; not shared.
struct DynamicLibrary {
    /// Why a library cannot be used: none of its names opened, or a function is missing.
    struct LoadError: Error, CustomStringConvertible {
        let description: String
    }

    /// A C function whose type Swift cannot spell (a variadic one, called through a C shim).
    typealias UntypedFunction = @convention(c) () -> Void

    /// The file name it was opened under.
    let name: String
    private let handle: UnsafeMutableRawPointer

    /// The first of `names` that opens (a file name the loader searches for, or a path).
    init(_ names: [String]) throws(LoadError) {
        for name in names {
            guard let handle = dlopen(name, RTLD_NOW | RTLD_LOCAL) else { continue }
            (self.name, self.handle) = (name, handle)
            return
        }
        throw LoadError(description: "cannot load \(names.joined(separator: " or "))")
    }

    /// The function `symbol`, as the C type `type` (which must match its C declaration).
    func function<Function>(_ symbol: String, as type: Function.Type = Function.self) throws(LoadError) -> Function {
        guard let address = dlsym(handle, symbol) else { throw LoadError(description: "\(name) lacks \(symbol)") }
        return unsafeBitCast(address, to: type)
    }
}
