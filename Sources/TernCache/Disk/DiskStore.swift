import Foundation

/*
 The on-disk layout of one disk cache directory:

   <directory>/manifest.sqlite (+ -wal, -shm)   one row per entry (WAL journal, synchronous = NORMAL)
   <directory>/data/<uuid>                       values above the inline threshold, one file each
   <directory>/tmp/<uuid>                        files being written, renamed into data/ before their row commits
   <directory>/corrupt/                          the last database found unusable, moved aside for diagnosis

 Schema (PRAGMA user_version = 1):

   CREATE TABLE entries (
       key         TEXT PRIMARY KEY NOT NULL,
       size        INTEGER NOT NULL,   -- bytes of the value
       inline_data BLOB,               -- the value when stored inline, else NULL
       filename    TEXT,               -- its file under data/ when not inline, else NULL
       extended    BLOB,               -- the caller's metadata, or NULL
       modified    INTEGER NOT NULL,   -- milliseconds since 1970 of the last write
       last_access INTEGER NOT NULL    -- milliseconds since 1970 of the last read or write (LRU)
   );
   CREATE INDEX entries_last_access ON entries(last_access);

 Crash safety (a process killed at any instruction):
 - a value file is written under tmp/, renamed into data/ (atomic), and only then is its row
   committed; the file a row replaced or deleted is unlinked after the commit. A kill leaves at
   worst a file without a row, which `reconcile()` deletes on the next open with tmp/'s leftovers,
   and rows whose file is gone are deleted there too. A file whose size is not the row's size
   reads as a miss and is removed.
 - SQLite's WAL makes every statement or transaction atomic. A database that cannot be opened or
   fails `quick_check` is moved to corrupt/ and an empty store is built in its place.
 - Reads do not write: access times are kept in memory and written in one transaction every 256
   reads, before a trim and when the store closes. A kill loses some recency, never data. An
   access is recorded only when the entry's last one is older than the access resolution (60 s
   by default): re-reading a hot entry is then a plain point select.
*/

/// The SQLite manifest and value files of one disk cache directory. Not thread-safe: `DiskCache`
/// serializes every call.
final class DiskStore {
    /// One stored value and what the manifest knows of it.
    struct Item {
        let data: Data
        let extendedData: Data?
        /// Milliseconds since 1970.
        let modified: Int64
        let lastAccess: Int64
    }

    static let schemaVersion: Int64 = 1

    let directory: URL
    private let databasePath: String
    private let dataPath: String
    private let temporaryPath: String
    private var database: SQLiteDatabase
    /// Key → file name, for the entries stored as files: a write or delete knows without a query
    /// whether it replaces a file.
    private var files: [String: String] = [:]
    /// Access times not yet written to the manifest.
    private var pendingAccess: [String: Int64] = [:]

    /// Opens the store, recovering from an unusable database and reconciling files with rows.
    /// - Parameter onRecovery: Told when an unusable database was moved aside and rebuilt.
    init(directory: URL, verify: Bool, onRecovery: (CacheError) -> Void) throws(CacheError) {
        self.directory = directory
        databasePath = directory.appendingPathComponent("manifest.sqlite").path
        dataPath = directory.appendingPathComponent("data").path
        temporaryPath = directory.appendingPathComponent("tmp").path
        for path in [directory.path, dataPath, temporaryPath] { try FileIO.createDirectory(path) }
        do {
            database = try Self.openDatabase(at: databasePath, verify: verify)
        } catch let error where Self.isUnusable(error) {
            let movedTo = try Self.moveAside(databasePath, in: directory)
            database = try Self.openDatabase(at: databasePath, verify: false)
            onRecovery(.recoveredFromCorruption(movedTo: movedTo, cause: error.description))
        }
        try reconcile()
    }

    /// Opens a fresh store after SQLite reported corruption mid-use: the database is moved aside.
    convenience init(rebuilding directory: URL, onRecovery: (CacheError) -> Void) throws(CacheError) {
        let movedTo = try Self.moveAside(directory.appendingPathComponent("manifest.sqlite").path, in: directory)
        try self.init(directory: directory, verify: false, onRecovery: onRecovery)
        onRecovery(.recoveredFromCorruption(movedTo: movedTo, cause: "SQLite reported corruption during use"))
    }

    deinit { close() }

    /// Writes pending access times and closes the database; the store is unusable afterwards.
    func close() {
        try? flushAccessTimes()
        database.close()
    }

    /// Whether an open failure means the database file itself is bad (as opposed to, say, a
    /// read-only directory), so that moving it aside will help.
    static func isUnusable(_ error: CacheError) -> Bool {
        switch error {
        case .sqlite(let code, let message, _):
            SQLiteDatabase.isCorruption(code) || message.hasPrefix("quick_check:") || message.hasPrefix("schema version")
        default: false
        }
    }

    private static func openDatabase(at path: String, verify: Bool) throws(CacheError) -> SQLiteDatabase {
        let database = try SQLiteDatabase(path: path)
        try database.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")
        let version = Int64(try database.text("PRAGMA user_version") ?? "0") ?? 0
        if version == 0 {
            try database.execute(
                """
                BEGIN;
                CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY NOT NULL, size INTEGER NOT NULL, inline_data BLOB,
                    filename TEXT, extended BLOB, modified INTEGER NOT NULL, last_access INTEGER NOT NULL);
                CREATE INDEX IF NOT EXISTS entries_last_access ON entries(last_access);
                PRAGMA user_version = \(schemaVersion);
                COMMIT;
                """)
        } else if version != schemaVersion {
            throw .sqlite(code: 0, message: "schema version \(version), expected \(schemaVersion)", operation: "open \(path)")
        }
        if verify, let verdict = try database.text("PRAGMA quick_check"), verdict != "ok" {
            throw .sqlite(code: 11, message: "quick_check: \(verdict)", operation: "open \(path)")
        }
        return database
    }

    /// Moves the database files to corrupt/ (replacing an earlier one) and returns where.
    private static func moveAside(_ databasePath: String, in directory: URL) throws(CacheError) -> String {
        let aside = directory.appendingPathComponent("corrupt").path
        try? FileManager.default.removeItem(atPath: aside)
        try FileIO.createDirectory(aside)
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: databasePath + suffix) {
            try FileIO.rename(databasePath + suffix, to: aside + "/manifest.sqlite" + suffix)
        }
        return aside
    }

    /// Deletes files without rows (and tmp/), and rows without files.
    private func reconcile() throws(CacheError) {
        for name in FileIO.names(in: temporaryPath) { FileIO.remove(temporaryPath + "/" + name) }
        var files: [String: String] = [:]
        try database.query(
            "SELECT key, filename FROM entries WHERE filename IS NOT NULL",
            row: { row in
                if let key = row.text(0), let name = row.text(1) { files[key] = name }
            })
        let onDisk = Set(FileIO.names(in: dataPath))
        let referenced = Set(files.values)
        for name in onDisk where !referenced.contains(name) { FileIO.remove(dataPath + "/" + name) }
        let missing = files.filter { !onDisk.contains($0.value) }.map(\.key)
        if !missing.isEmpty {
            try database.transaction { () throws(CacheError) in
                for key in missing {
                    try database.query("DELETE FROM entries WHERE key = ?", bind: { $0.bind(1, key) })
                    files.removeValue(forKey: key)
                }
            }
        }
        self.files = files
    }

    // MARK: - Reading and writing

    /// The item for `key`, or nil. A value file that is missing or of the wrong size is removed.
    /// - Parameter accessResolution: Milliseconds: the access is recorded only when the entry's
    ///   last recorded access is at least this old.
    func item(forKey key: String, now: Int64, accessResolution: Int64) throws(CacheError) -> Item? {
        var found: (size: Int, inline: Data?, file: String?, extended: Data?, modified: Int64, access: Int64)?
        try database.query(
            "SELECT size, inline_data, filename, extended, modified, last_access FROM entries WHERE key = ?",
            bind: { $0.bind(1, key) },
            row: { row in found = (Int(row.int64(0)), row.data(1), row.text(2), row.data(3), row.int64(4), row.int64(5)) })
        guard let found else { return nil }
        let lastAccess = pendingAccess[key] ?? found.access
        let data: Data
        if let inline = found.inline {
            data = inline
        } else if let name = found.file, let contents = FileIO.read(dataPath + "/" + name, expectedSize: found.size) {
            data = contents
        } else {
            try remove(key)
            return nil
        }
        if now - lastAccess >= accessResolution {
            pendingAccess[key] = now
            if pendingAccess.count >= 256 { try flushAccessTimes() }
        }
        return Item(data: data, extendedData: found.extended, modified: found.modified, lastAccess: lastAccess)
    }

    /// Stores `data` inline when it is at most `inlineThreshold` bytes, else in a file.
    func set(_ data: Data, extendedData: Data?, forKey key: String, inlineThreshold: Int, now: Int64) throws(CacheError) {
        var name: String?
        if data.count > inlineThreshold {
            let fileName = UUID().uuidString
            let temporary = temporaryPath + "/" + fileName
            do {
                try FileIO.write(data, to: temporary)
                try FileIO.rename(temporary, to: dataPath + "/" + fileName)
            } catch {
                FileIO.remove(temporary)
                throw error
            }
            name = fileName
        }
        do {
            try database.query(
                "INSERT OR REPLACE INTO entries (key, size, inline_data, filename, extended, modified, last_access) VALUES (?, ?, ?, ?, ?, ?, ?)",
                bind: { statement in
                    statement.bind(1, key)
                    statement.bind(2, Int64(data.count))
                    if name == nil { statement.bind(3, data) } else { statement.bindNull(3) }
                    if let name { statement.bind(4, name) } else { statement.bindNull(4) }
                    statement.bind(5, extendedData)
                    statement.bind(6, now)
                    statement.bind(7, now)
                })
        } catch {
            if let name { FileIO.remove(dataPath + "/" + name) }
            throw error
        }
        pendingAccess.removeValue(forKey: key)
        let replaced = name.map { files.updateValue($0, forKey: key) } ?? files.removeValue(forKey: key)
        if let replaced { FileIO.remove(dataPath + "/" + replaced) }
    }

    /// Removes the entry for `key`, if any.
    func remove(_ key: String) throws(CacheError) {
        try database.query("DELETE FROM entries WHERE key = ?", bind: { $0.bind(1, key) })
        forget(key)
    }

    /// Drops what memory holds for a key whose row is gone (committed), and unlinks its file.
    private func forget(_ key: String) {
        pendingAccess.removeValue(forKey: key)
        if let name = files.removeValue(forKey: key) { FileIO.remove(dataPath + "/" + name) }
    }

    /// Removes the entries whose key starts with `prefix` (a range scan of the primary key).
    /// - Returns: How many were removed.
    func remove(keysWithPrefix prefix: String) throws(CacheError) -> Int {
        var keys: [String] = []
        // Keys in [prefix, prefix + U+10FFFF) start with prefix (TEXT compares as UTF-8 bytes).
        let upper = prefix + "\u{10FFFF}"
        try database.query(
            "SELECT key FROM entries WHERE key >= ? AND key < ?",
            bind: {
                $0.bind(1, prefix); $0.bind(2, upper)
            },
            row: { if let key = $0.text(0), key.hasPrefix(prefix) { keys.append(key) } })
        guard !keys.isEmpty else { return 0 }
        try database.transaction { () throws(CacheError) in
            for key in keys { try database.query("DELETE FROM entries WHERE key = ?", bind: { $0.bind(1, key) }) }
        }
        keys.forEach(forget)
        return keys.count
    }

    /// Removes every entry and file.
    func removeAll() throws(CacheError) {
        try database.execute("DELETE FROM entries")
        pendingAccess = [:]
        files = [:]
        for name in FileIO.names(in: dataPath) { FileIO.remove(dataPath + "/" + name) }
    }

    /// The number of entries and their total size in bytes.
    func totals() throws(CacheError) -> (count: Int, size: Int64) {
        var totals = (count: 0, size: Int64(0))
        try database.query("SELECT count(*), coalesce(sum(size), 0) FROM entries", row: { totals = (Int($0.int64(0)), $0.int64(1)) })
        return totals
    }

    /// Every key, least recently used first.
    func keys() throws(CacheError) -> [String] {
        try flushAccessTimes()
        var keys: [String] = []
        try database.query("SELECT key FROM entries ORDER BY last_access, rowid", row: { if let key = $0.text(0) { keys.append(key) } })
        return keys
    }

    /// `PRAGMA integrity_check`'s verdict: "ok" for a sound database.
    func integrityCheck() throws(CacheError) -> String {
        try database.text("PRAGMA integrity_check") ?? ""
    }

    // MARK: - Trimming

    /// Removes, in one transaction, the entries last accessed before `accessedBefore`, then the
    /// least recently used until at most `count` entries and `size` bytes remain.
    /// - Returns: How many entries were removed.
    @discardableResult
    func trim(count: Int, size: Int64, accessedBefore: Int64?) throws(CacheError) -> Int {
        try flushAccessTimes()
        var removed: [(key: String, size: Int64)] = []
        try database.transaction { () throws(CacheError) in
            if let accessedBefore {
                try database.query(
                    "SELECT key, size FROM entries WHERE last_access < ?", bind: { $0.bind(1, accessedBefore) },
                    row: { if let key = $0.text(0) { removed.append((key, $0.int64(1))) } })
                try database.query("DELETE FROM entries WHERE last_access < ?", bind: { $0.bind(1, accessedBefore) })
            }
            var (remainingCount, remainingSize) = try totals()
            while remainingCount > count || remainingSize > size {
                var batch: [(key: String, size: Int64)] = []
                try database.query(
                    "SELECT key, size FROM entries ORDER BY last_access, rowid LIMIT 64",
                    row: { if let key = $0.text(0) { batch.append((key, $0.int64(1))) } })
                guard !batch.isEmpty else { break }
                for entry in batch where remainingCount > count || remainingSize > size {
                    try database.query("DELETE FROM entries WHERE key = ?", bind: { $0.bind(1, entry.key) })
                    removed.append(entry)
                    remainingCount -= 1
                    remainingSize -= entry.size
                }
            }
        }
        // Files go after the commit: a kill in between leaves files without rows, never the reverse.
        removed.forEach { forget($0.key) }
        return removed.count
    }

    /// Writes the access times kept in memory, in one transaction.
    func flushAccessTimes() throws(CacheError) {
        guard !pendingAccess.isEmpty else { return }
        let pending = pendingAccess
        pendingAccess = [:]
        try database.transaction { () throws(CacheError) in
            for (key, time) in pending {
                try database.query(
                    "UPDATE entries SET last_access = ? WHERE key = ?",
                    bind: {
                        $0.bind(1, time); $0.bind(2, key)
                    })
            }
        }
    }
}
