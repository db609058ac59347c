#if canImport(SQLite3)
import SQLite3
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// The SQLite functions the disk cache calls, and where they come from.
///
/// Apple platforms link the SDK's SQLite (the `SQLite3` module). Elsewhere SQLite is loaded at run
/// time from `libsqlite3.so.0` (the Swift toolchain's package manager links it, so every machine
/// that builds Swift has it; a slim run-time image may not), so building Tern needs
/// no SQLite headers or development package. The signatures are written for this project from
/// SQLite's documented C interface; none of the functions is variadic. Set `TERN_SQLITE` to
/// another library's path to load that one instead, or to `none` to run as if SQLite were absent.
///
/// Thread safety: immutable after loading. SQLite's own rules for a connection are its owner's
/// (`SQLiteDatabase` is used under one lock).
struct SQLiteLibrary: Sendable {
    typealias Handle = OpaquePointer
    typealias Destructor = @convention(c) (UnsafeMutableRawPointer?) -> Void
    typealias ExecCallback =
        @convention(c) (
            UnsafeMutableRawPointer?, Int32, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?,
            UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        ) -> Int32

    /// The library's version, as `sqlite3_libversion` reports it.
    let version: String
    let open: @convention(c) (UnsafePointer<CChar>?, UnsafeMutablePointer<Handle?>?, Int32, UnsafePointer<CChar>?) -> Int32
    let close: @convention(c) (Handle?) -> Int32
    let errorMessage: @convention(c) (Handle?) -> UnsafePointer<CChar>?
    let errorString: @convention(c) (Int32) -> UnsafePointer<CChar>?
    let extendedResultCodes: @convention(c) (Handle?, Int32) -> Int32
    let busyTimeout: @convention(c) (Handle?, Int32) -> Int32
    let exec:
        @convention(c) (
            Handle?, UnsafePointer<CChar>?, ExecCallback?, UnsafeMutableRawPointer?,
            UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        ) -> Int32
    let changes: @convention(c) (Handle?) -> Int32
    let lastInsertRowID: @convention(c) (Handle?) -> Int64
    let prepare:
        @convention(c) (
            Handle?, UnsafePointer<CChar>?, Int32, UnsafeMutablePointer<Handle?>?,
            UnsafeMutablePointer<UnsafePointer<CChar>?>?
        ) -> Int32
    let step: @convention(c) (Handle?) -> Int32
    let reset: @convention(c) (Handle?) -> Int32
    let clearBindings: @convention(c) (Handle?) -> Int32
    let finalize: @convention(c) (Handle?) -> Int32
    let bindInt64: @convention(c) (Handle?, Int32, Int64) -> Int32
    let bindText: @convention(c) (Handle?, Int32, UnsafePointer<CChar>?, Int32, Destructor?) -> Int32
    let bindBlob: @convention(c) (Handle?, Int32, UnsafeRawPointer?, Int32, Destructor?) -> Int32
    let bindZeroBlob: @convention(c) (Handle?, Int32, Int32) -> Int32
    let bindNull: @convention(c) (Handle?, Int32) -> Int32
    let columnType: @convention(c) (Handle?, Int32) -> Int32
    let columnInt64: @convention(c) (Handle?, Int32) -> Int64
    let columnText: @convention(c) (Handle?, Int32) -> UnsafePointer<UInt8>?
    let columnBlob: @convention(c) (Handle?, Int32) -> UnsafeRawPointer?
    let columnBytes: @convention(c) (Handle?, Int32) -> Int32

    /// SQLite for this process, or why there is none; looked up once, on first use.
    static let loaded: Result<SQLiteLibrary, CacheError> = {
        #if canImport(SQLite3)
        return .success(linked())
        #else
        let override = ProcessInfo.processInfo.environment["TERN_SQLITE"]
        if override == "none" { return .failure(.sqliteUnavailable(reason: "TERN_SQLITE=none")) }
        return load(from: override.map { [$0] } ?? ["libsqlite3.so.0", "libsqlite3.so"])
        #endif
    }()

    /// SQLite for this process, or `CacheError.sqliteUnavailable`.
    static func shared() throws(CacheError) -> SQLiteLibrary {
        try loaded.get()
    }

    #if canImport(SQLite3)
    /// The SDK's SQLite, linked.
    private static func linked() -> SQLiteLibrary {
        SQLiteLibrary(
            version: String(cString: sqlite3_libversion()),
            open: sqlite3_open_v2, close: sqlite3_close_v2, errorMessage: sqlite3_errmsg, errorString: sqlite3_errstr,
            extendedResultCodes: sqlite3_extended_result_codes, busyTimeout: sqlite3_busy_timeout, exec: sqlite3_exec,
            changes: sqlite3_changes, lastInsertRowID: sqlite3_last_insert_rowid, prepare: sqlite3_prepare_v2, step: sqlite3_step,
            reset: sqlite3_reset,
            clearBindings: sqlite3_clear_bindings, finalize: sqlite3_finalize, bindInt64: sqlite3_bind_int64,
            bindText: sqlite3_bind_text, bindBlob: sqlite3_bind_blob, bindZeroBlob: sqlite3_bind_zeroblob,
            bindNull: sqlite3_bind_null, columnType: sqlite3_column_type, columnInt64: sqlite3_column_int64,
            columnText: sqlite3_column_text, columnBlob: sqlite3_column_blob, columnBytes: sqlite3_column_bytes)
    }
    #else
    /// The first of `names` that `dlopen` loads and that has every function, or why none did.
    static func load(from names: [String]) -> Result<SQLiteLibrary, CacheError> {
        guard let library = names.lazy.compactMap({ dlopen($0, RTLD_NOW | RTLD_LOCAL) }).first else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            return .failure(.sqliteUnavailable(reason: "cannot load \(names.joined(separator: " or ")): \(reason)"))
        }
        func function<T>(_ name: String) throws(CacheError) -> T {
            guard let pointer = dlsym(library, name) else {
                throw .sqliteUnavailable(reason: "the loaded SQLite has no \(name)")
            }
            return unsafeBitCast(pointer, to: T.self)
        }
        do throws(CacheError) {
            let libraryVersion: @convention(c) () -> UnsafePointer<CChar>? = try function("sqlite3_libversion")
            return .success(
                SQLiteLibrary(
                    version: libraryVersion().map { String(cString: $0) } ?? "?",
                    open: try function("sqlite3_open_v2"), close: try function("sqlite3_close_v2"),
                    errorMessage: try function("sqlite3_errmsg"), errorString: try function("sqlite3_errstr"),
                    extendedResultCodes: try function("sqlite3_extended_result_codes"),
                    busyTimeout: try function("sqlite3_busy_timeout"), exec: try function("sqlite3_exec"),
                    changes: try function("sqlite3_changes"), lastInsertRowID: try function("sqlite3_last_insert_rowid"),
                    prepare: try function("sqlite3_prepare_v2"),
                    step: try function("sqlite3_step"), reset: try function("sqlite3_reset"),
                    clearBindings: try function("sqlite3_clear_bindings"), finalize: try function("sqlite3_finalize"),
                    bindInt64: try function("sqlite3_bind_int64"), bindText: try function("sqlite3_bind_text"),
                    bindBlob: try function("sqlite3_bind_blob"), bindZeroBlob: try function("sqlite3_bind_zeroblob"),
                    bindNull: try function("sqlite3_bind_null"), columnType: try function("sqlite3_column_type"),
                    columnInt64: try function("sqlite3_column_int64"), columnText: try function("sqlite3_column_text"),
                    columnBlob: try function("sqlite3_column_blob"), columnBytes: try function("sqlite3_column_bytes")))
        } catch {
            dlclose(library)
            return .failure(error)
        }
    }
    #endif
}

/// SQLite's result codes, open flags and column types that the disk cache uses: fixed values of
/// SQLite's C interface, the same on every platform.
enum SQLiteConstant {
    static let ok: Int32 = 0
    static let corrupt: Int32 = 11
    static let notADatabase: Int32 = 26
    static let row: Int32 = 100
    static let done: Int32 = 101
    static let openReadWrite: Int32 = 0x0000_0002
    static let openCreate: Int32 = 0x0000_0004
    static let openNoMutex: Int32 = 0x0000_8000
    static let nullColumn: Int32 = 5
}
