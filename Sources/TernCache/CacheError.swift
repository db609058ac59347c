import Foundation

/// Why a cache operation failed. Every SQLite failure carries SQLite's own result code and message.
/// Thread safety: a value type, safe to share.
public enum CacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// SQLite refused an operation: `code` is its (extended) result code, `message` its
    /// explanation, `operation` what the cache was doing.
    case sqlite(code: Int32, message: String, operation: String)
    /// SQLite, which the disk cache stores its index in, cannot be used in this process: on Linux
    /// `libsqlite3.so.0` could not be loaded (Debian and Ubuntu: the `libsqlite3-0` package), or
    /// lacks a function. `reason` says which. The memory cache works without it.
    case sqliteUnavailable(reason: String)
    /// A file or directory of the store could not be read, written or created.
    case io(path: String, reason: String)
    /// The store's database was unreadable or corrupt; it was moved aside to `movedTo` and an
    /// empty store was created in its place. Reported once, through `DiskCache.Configuration.onEvent`,
    /// never thrown by a read or write.
    case recoveredFromCorruption(movedTo: String, cause: String)
    /// A value could not be encoded for the `Codable` convenience API.
    case encoding(description: String)
    /// A stored value could not be decoded as the requested type.
    case decoding(description: String)

    /// The SQLite result code, for `.sqlite` errors.
    public var sqliteCode: Int32? {
        if case .sqlite(let code, _, _) = self { code } else { nil }
    }

    /// A one-line description naming the failing operation.
    public var description: String {
        switch self {
        case .sqlite(let code, let message, let operation): "SQLite error \(code) during \(operation): \(message)"
        case .sqliteUnavailable(let reason): "SQLite is unavailable, so the disk cache cannot open: \(reason)"
        case .io(let path, let reason): "cannot access \(path): \(reason)"
        case .recoveredFromCorruption(let movedTo, let cause): "the cache database was unusable (\(cause)); moved to \(movedTo) and rebuilt"
        case .encoding(let description): "cannot encode the value: \(description)"
        case .decoding(let description): "cannot decode the stored value: \(description)"
        }
    }
}
