import Foundation

/// One SQLite connection and its prepared statements, cached by SQL text: the only code in Tern
/// that touches SQLite's `OpaquePointer`s.
///
/// Not thread-safe: its owner (`DiskStore`) serializes every call under one lock. The connection
/// is opened without SQLite's own mutex for that reason. `package` so that tern-bench can time raw
/// SQLite with the same pragmas as the baseline of the disk cache benchmark.
package final class SQLiteDatabase {
    let path: String
    private let sqlite: SQLiteLibrary
    private var connection: OpaquePointer?
    private var statements: [String: OpaquePointer] = [:]

    /// Opens (creating if needed) the database at `path`; `.sqliteUnavailable` where SQLite
    /// cannot be loaded.
    package init(path: String) throws(CacheError) {
        self.path = path
        let sqlite = try SQLiteLibrary.shared()
        self.sqlite = sqlite
        var connection: OpaquePointer?
        let flags = SQLiteConstant.openReadWrite | SQLiteConstant.openCreate | SQLiteConstant.openNoMutex
        let code = sqlite.open(path, &connection, flags, nil)
        guard code == SQLiteConstant.ok, let connection else {
            let message = Self.message(sqlite, connection, code)
            _ = sqlite.close(connection)
            throw .sqlite(code: code, message: message, operation: "open \(path)")
        }
        self.connection = connection
        _ = sqlite.extendedResultCodes(connection, 1)
        // Another connection to the same file (a store being closed, whose last connection
        // checkpoints the WAL under an exclusive lock, or another process) holds its locks for
        // milliseconds: wait for them instead of failing at once with SQLITE_BUSY.
        _ = sqlite.busyTimeout(connection, Self.busyTimeoutMilliseconds)
    }

    /// How long a statement waits for another connection's lock before it fails with SQLITE_BUSY.
    static let busyTimeoutMilliseconds: Int32 = 5_000

    deinit { close() }

    /// Finalizes every statement and closes the connection; later calls fail with SQLITE_MISUSE.
    func close() {
        statements.values.forEach { _ = sqlite.finalize($0) }
        statements = [:]
        _ = sqlite.close(connection)
        connection = nil
    }

    /// Runs one or more statements that return no rows (pragmas, schema, transactions).
    package func execute(_ sql: String) throws(CacheError) {
        let code = sqlite.exec(connection, sql, nil, nil, nil)
        guard code == SQLiteConstant.ok else { throw error(code, sql) }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction, rolled back if it throws.
    func transaction(_ body: () throws(CacheError) -> Void) throws(CacheError) {
        try execute("BEGIN IMMEDIATE")
        do {
            try body()
            try execute("COMMIT")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }

    /// Runs `sql` (cached), lets `bind` bind its parameters, and calls `row` for each result row.
    /// Parameters bound with `Statement.bindStatic` must stay valid until this returns.
    package func query(
        _ sql: String, bind: (Statement) throws(CacheError) -> Void = { _ in },
        row: (Statement) throws(CacheError) -> Void = { _ in }
    ) throws(CacheError) {
        let statement = try prepared(sql)
        defer {
            _ = sqlite.reset(statement)
            _ = sqlite.clearBindings(statement)
        }
        let wrapper = Statement(sqlite: sqlite, pointer: statement)
        try bind(wrapper)
        while true {
            let code = sqlite.step(statement)
            if code == SQLiteConstant.done { return }
            guard code == SQLiteConstant.row else { throw error(code, sql) }
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
    var changes: Int { Int(sqlite.changes(connection)) }

    /// The rowid of the last row inserted on this connection.
    var lastInsertRowID: Int64 { sqlite.lastInsertRowID(connection) }

    private func prepared(_ sql: String) throws(CacheError) -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let code = sqlite.prepare(connection, sql, -1, &statement, nil)
        guard code == SQLiteConstant.ok, let statement else { throw error(code, sql) }
        statements[sql] = statement
        return statement
    }

    private func error(_ code: Int32, _ sql: String) -> CacheError {
        .sqlite(
            code: code, message: Self.message(sqlite, connection, code),
            operation: sql.split(separator: " ").prefix(4).joined(separator: " "))
    }

    /// The connection's last error message, or the generic text for `code` without a connection.
    private static func message(_ sqlite: SQLiteLibrary, _ connection: OpaquePointer?, _ code: Int32) -> String {
        let text = connection.map { sqlite.errorMessage($0) } ?? sqlite.errorString(code)
        return text.map { String(cString: $0) } ?? "SQLite error \(code)"
    }

    /// Whether `code` (possibly extended) says the database file is corrupt or not a database.
    static func isCorruption(_ code: Int32) -> Bool {
        let primary = code & 0xFF
        return primary == SQLiteConstant.corrupt || primary == SQLiteConstant.notADatabase
    }
}

/// A prepared statement during one `SQLiteDatabase.query`: parameter binding and column reading.
package struct Statement {
    fileprivate let sqlite: SQLiteLibrary
    fileprivate let pointer: OpaquePointer

    /// SQLite copies the bytes (`SQLITE_TRANSIENT`).
    private static let transient = unsafeBitCast(-1, to: SQLiteLibrary.Destructor.self)

    package func bind(_ index: Int32, _ value: Int64) { _ = sqlite.bindInt64(pointer, index, value) }
    /// Binds text by its UTF-8 length, so that a key with an embedded NUL is stored whole.
    package func bind(_ index: Int32, _ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            utf8.withMemoryRebound(to: CChar.self) { text in
                // A nil pointer would bind NULL: an empty key is bound as an empty static string.
                if let start = text.baseAddress {
                    _ = sqlite.bindText(pointer, index, start, Int32(text.count), Self.transient)
                } else {
                    _ = sqlite.bindText(pointer, index, "", 0, nil)
                }
            }
        }
    }
    package func bindNull(_ index: Int32) { _ = sqlite.bindNull(pointer, index) }

    /// Binds a copy of `data` (NULL when nil; an empty blob, not NULL, when empty).
    package func bind(_ index: Int32, _ data: Data?) {
        guard let data else { return bindNull(index) }
        guard !data.isEmpty else { return bindStatic(index, UnsafeRawBufferPointer(start: nil, count: 0)) }
        _ = data.withUnsafeBytes { sqlite.bindBlob(pointer, index, $0.baseAddress, Int32($0.count), Self.transient) }
    }

    /// Binds `bytes` without copying; they must stay valid until the query ends.
    package func bindStatic(_ index: Int32, _ bytes: UnsafeRawBufferPointer) {
        if bytes.isEmpty || bytes.baseAddress == nil {
            _ = sqlite.bindZeroBlob(pointer, index, 0)
        } else {
            _ = sqlite.bindBlob(pointer, index, bytes.baseAddress, Int32(bytes.count), nil)
        }
    }

    package func int64(_ column: Int32) -> Int64 { sqlite.columnInt64(pointer, column) }
    package func isNull(_ column: Int32) -> Bool { sqlite.columnType(pointer, column) == SQLiteConstant.nullColumn }

    /// The text in `column` by its byte length (embedded NULs included); nil for NULL.
    package func text(_ column: Int32) -> String? {
        guard let text = sqlite.columnText(pointer, column) else { return nil }
        return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite.columnBytes(pointer, column))), as: UTF8.self)
    }

    /// The blob in `column`, copied; nil for NULL, empty `Data` for an empty blob.
    package func data(_ column: Int32) -> Data? {
        guard !isNull(column) else { return nil }
        let count = Int(sqlite.columnBytes(pointer, column))
        guard count > 0, let bytes = sqlite.columnBlob(pointer, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}
