#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif
import Foundation

/// One SQLite connection and its prepared statements, cached by SQL text: the only code in Tern
/// that touches SQLite's `OpaquePointer`s.
///
/// Not thread-safe: its owner (`DiskStore`) serializes every call under one lock. The connection
/// is opened without SQLite's own mutex for that reason. `package` so that tern-bench can time raw
/// SQLite with the same pragmas as the baseline of the disk cache benchmark.
package final class SQLiteDatabase {
    let path: String
    private var connection: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    /// Opens (creating if needed) the database at `path`.
    package init(path: String) throws(CacheError) {
        self.path = path
        var connection: OpaquePointer?
        let code = sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard code == SQLITE_OK, let connection else {
            let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
            sqlite3_close_v2(connection)
            throw .sqlite(code: code, message: message, operation: "open \(path)")
        }
        self.connection = connection
        sqlite3_extended_result_codes(connection, 1)
        // Another connection to the same file (a store being closed, whose last connection
        // checkpoints the WAL under an exclusive lock, or another process) holds its locks for
        // milliseconds: wait for them instead of failing at once with SQLITE_BUSY.
        sqlite3_busy_timeout(connection, Self.busyTimeoutMilliseconds)
    }

    /// How long a statement waits for another connection's lock before it fails with SQLITE_BUSY.
    static let busyTimeoutMilliseconds: Int32 = 5_000

    deinit { close() }

    /// Finalizes every statement and closes the connection; later calls fail with SQLITE_MISUSE.
    func close() {
        statements.values.forEach { sqlite3_finalize($0) }
        statements = [:]
        sqlite3_close_v2(connection)
        connection = nil
    }

    /// Runs one or more statements that return no rows (pragmas, schema, transactions).
    package func execute(_ sql: String) throws(CacheError) {
        let code = sqlite3_exec(connection, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code, sql) }
    }

    /// Runs `sql` (cached), lets `bind` bind its parameters, and calls `row` for each result row.
    /// Parameters bound with `Statement.bindStatic` must stay valid until this returns.
    package func query(_ sql: String, bind: (Statement) throws(CacheError) -> Void = { _ in },
               row: (Statement) throws(CacheError) -> Void = { _ in }) throws(CacheError) {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        let wrapper = Statement(pointer: statement)
        try bind(wrapper)
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw error(code, sql) }
            try row(wrapper)
        }
    }

    /// The first column of the first row of `sql`, as text (for pragmas such as integrity_check).
    func text(_ sql: String) throws(CacheError) -> String? {
        var result: String?
        try query(sql, row: { statement in if result == nil { result = statement.text(0) } })
        return result
    }

    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { Int(sqlite3_changes(connection)) }

    private func prepared(_ sql: String) throws(CacheError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error(code, sql) }
        statements[sql] = statement
        return statement
    }

    private func error(_ code: Int32, _ sql: String) -> CacheError {
        let message = connection.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        return .sqlite(code: code, message: message, operation: sql.split(separator: " ").prefix(4).joined(separator: " "))
    }

    /// Whether `code` (possibly extended) says the database file is corrupt or not a database.
    static func isCorruption(_ code: Int32) -> Bool {
        let primary = code & 0xFF
        return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB
    }
}

/// A prepared statement during one `SQLiteDatabase.query`: parameter binding and column reading.
package struct Statement {
    fileprivate let pointer: OpaquePointer

    /// SQLite copies the bytes (`SQLITE_TRANSIENT`).
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    package func bind(_ index: Int32, _ value: Int64) { sqlite3_bind_int64(pointer, index, value) }
    /// Binds text by its UTF-8 length, so that a key with an embedded NUL is stored whole.
    package func bind(_ index: Int32, _ value: String) {
        var value = value
        _ = value.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: CChar.self) { text in
                // A nil pointer would bind NULL: an empty key is bound as an empty static string.
                if let start = text.baseAddress {
                    sqlite3_bind_text(pointer, index, start, Int32(text.count), Self.transient)
                } else {
                    sqlite3_bind_text(pointer, index, "", 0, nil)
                }
            }
        }
    }
    package func bindNull(_ index: Int32) { sqlite3_bind_null(pointer, index) }

    /// Binds a copy of `data` (NULL when nil; an empty blob, not NULL, when empty).
    package func bind(_ index: Int32, _ data: Data?) {
        guard let data else { return bindNull(index) }
        guard !data.isEmpty else { return bindStatic(index, UnsafeRawBufferPointer(start: nil, count: 0)) }
        _ = data.withUnsafeBytes { sqlite3_bind_blob(pointer, index, $0.baseAddress, Int32($0.count), Self.transient) }
    }

    /// Binds `bytes` without copying; they must stay valid until the query ends.
    package func bindStatic(_ index: Int32, _ bytes: UnsafeRawBufferPointer) {
        if bytes.isEmpty || bytes.baseAddress == nil {
            sqlite3_bind_zeroblob(pointer, index, 0)
        } else {
            sqlite3_bind_blob(pointer, index, bytes.baseAddress, Int32(bytes.count), nil)
        }
    }

    package func int64(_ column: Int32) -> Int64 { sqlite3_column_int64(pointer, column) }
    package func isNull(_ column: Int32) -> Bool { sqlite3_column_type(pointer, column) == SQLITE_NULL }

    /// The text in `column` by its byte length (embedded NULs included); nil for NULL.
    package func text(_ column: Int32) -> String? {
        guard let text = sqlite3_column_text(pointer, column) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(pointer, column))), as: UTF8.self)
    }

    /// The blob in `column`, copied; nil for NULL, empty `Data` for an empty blob.
    package func data(_ column: Int32) -> Data? {
        guard !isNull(column) else { return nil }
        let count = Int(sqlite3_column_bytes(pointer, column))
        guard count > 0, let bytes = sqlite3_column_blob(pointer, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}
