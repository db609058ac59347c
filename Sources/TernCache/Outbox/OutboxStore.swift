import Foundation

/*
 The on-disk layout of one outbox directory (Tern's `Outbox`, requests kept until sent):

   <directory>/outbox.sqlite (+ -wal, -shm)   one row per item (WAL journal)
   <directory>/bodies/<id>                     bodies sent from a file, copied here before their row commits
   <directory>/tmp/                            copies being written, renamed into bodies/ before the commit

 Schema (PRAGMA user_version = 1):

   CREATE TABLE items (
       seq             INTEGER PRIMARY KEY AUTOINCREMENT,  -- the order items were accepted in
       id              TEXT UNIQUE NOT NULL,               -- the id the app keeps
       ordering_group  TEXT,                               -- items of one group are sent one after another
       api_group       TEXT,                               -- the name of the request's API group
       method          TEXT NOT NULL,
       url             TEXT NOT NULL,                      -- absolute, parameters and URL hooks applied
       headers         BLOB NOT NULL,                      -- a JSON object of the stored headers
       body            BLOB,                               -- the body when it was in memory
       body_file       TEXT,                               -- its file under bodies/ when it was a file
       body_size       INTEGER NOT NULL,
       idempotency_key TEXT NOT NULL,                      -- generated once, repeated by every send
       created         INTEGER NOT NULL,                   -- milliseconds since 1970 (the age limit's clock)
       attempts        INTEGER NOT NULL,                   -- sends that ended, whatever the outcome
       state           INTEGER NOT NULL,                   -- 0 queued, 1 delivered, 2 failed
       status          INTEGER,                            -- the final HTTP status, once there is one
       result_body     BLOB,                               -- the final response's body (delivered, rejected)
       failure         TEXT,                               -- why a failed item failed (rejected, expired, unsendable)
       last_error      TEXT,                               -- the last transient failure, for inspection
       finished        INTEGER                             -- when it was delivered or failed
   );

 Crash safety (a process killed at any instruction): an item is accepted only once its row has
 committed (`synchronous = FULL` by default, so a power cut keeps it too); a body file is renamed
 into bodies/ before that commit, and a file without a row is deleted when the store opens. An
 outcome is written after the server answered: a kill in between sends the item again with the
 same idempotency key, which a server that honours the key answers without a second effect.
*/

/// The SQLite table and body files of one outbox directory. Not thread-safe: its owner (Tern's
/// `Outbox`) serializes every call under one lock, but for `body(of:)`.
package final class OutboxStore {
    /// One stored item, without its body (read with `body(of:)` when it is sent).
    package struct Record: Sendable {
        package var seq: Int64 = 0
        package var id: String
        package var orderingGroup: String?
        package var apiGroup: String?
        package var method: String
        package var url: String
        package var headers: [String: String]
        package var bodyFile: String?
        package var bodySize: Int64
        package var idempotencyKey: String
        /// Milliseconds since 1970.
        package var created: Int64
        package var attempts: Int = 0
        package var state: State = .queued
        package var status: Int?
        package var resultBody: Data?
        package var failure: String?
        package var lastError: String?
        package var finished: Int64?

        package enum State: Int64, Sendable {
            case queued = 0
            case delivered = 1
            case failed = 2
        }

        package init(
            id: String, orderingGroup: String?, apiGroup: String?, method: String, url: String, headers: [String: String],
            bodyFile: String?, bodySize: Int64, idempotencyKey: String, created: Int64
        ) {
            self.id = id
            self.orderingGroup = orderingGroup
            self.apiGroup = apiGroup
            self.method = method
            self.url = url
            self.headers = headers
            self.bodyFile = bodyFile
            self.bodySize = bodySize
            self.idempotencyKey = idempotencyKey
            self.created = created
        }
    }

    static let schemaVersion: Int64 = 1
    private static let columns =
        "seq, id, ordering_group, api_group, method, url, headers, body_file, body_size, idempotency_key, created, attempts, state, status, result_body, failure, last_error, finished"

    package let directory: URL
    /// Where bodies sent from files are kept, one file per item.
    package let bodiesPath: String
    /// Where a body file is copied before it is renamed into `bodiesPath`.
    package let temporaryPath: String
    private let database: SQLiteDatabase
    /// A second connection for `body(of:)`, so that reading the next item's body does not wait
    /// for a write (and its flush) on `database`: WAL lets a reader go on beside a writer.
    private let reader: SQLiteDatabase
    private let synchronous: Bool

    /// Opens (creating if needed) the outbox in `directory` and deletes body files no row names.
    /// - Parameter synchronous: Whether an accepted item survives a power cut (`synchronous =
    ///   FULL`, a flush per accepted item), not only a killed process (`NORMAL`).
    package init(directory: URL, synchronous: Bool) throws(CacheError) {
        self.directory = directory
        self.synchronous = synchronous
        bodiesPath = directory.appendingPathComponent("bodies").path
        temporaryPath = directory.appendingPathComponent("tmp").path
        for path in [directory.path, bodiesPath, temporaryPath] { try FileIO.createDirectory(path) }
        database = try SQLiteDatabase(path: directory.appendingPathComponent("outbox.sqlite").path)
        try database.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = \(synchronous ? "FULL" : "NORMAL");")
        let version = Int64(try database.text("PRAGMA user_version") ?? "0") ?? 0
        if version == 0 {
            try database.execute(
                """
                BEGIN;
                CREATE TABLE IF NOT EXISTS items (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT UNIQUE NOT NULL,
                    ordering_group TEXT, api_group TEXT, method TEXT NOT NULL, url TEXT NOT NULL, headers BLOB NOT NULL,
                    body BLOB, body_file TEXT, body_size INTEGER NOT NULL, idempotency_key TEXT NOT NULL,
                    created INTEGER NOT NULL, attempts INTEGER NOT NULL, state INTEGER NOT NULL, status INTEGER,
                    result_body BLOB, failure TEXT, last_error TEXT, finished INTEGER);
                PRAGMA user_version = \(Self.schemaVersion);
                COMMIT;
                """)
        } else if version != Self.schemaVersion {
            throw .sqlite(code: 0, message: "outbox schema version \(version), expected \(Self.schemaVersion)", operation: "open")
        }
        reader = try SQLiteDatabase(path: directory.appendingPathComponent("outbox.sqlite").path)
        try removeUnclaimedFiles()
    }

    deinit {
        reader.close()
        database.close()
    }

    /// Every stored item, in the order they were accepted; delivered ones without their answer.
    package func records() throws(CacheError) -> [Record] {
        var records: [Record] = []
        // A delivered item's answer stays on disk (`answer(of:)`): delivered items are not limited in number.
        let columns = Self.columns.replacingOccurrences(of: "result_body", with: "CASE WHEN state = 1 THEN NULL ELSE result_body END")
        try database.query("SELECT \(columns) FROM items ORDER BY seq", row: { records.append(Self.record($0)) })
        return records
    }

    /// The answer kept with the item `seq` (delivered or rejected), nil when there is none.
    package func answer(of seq: Int64) throws(CacheError) -> Data? {
        var answer: Data?
        try database.query("SELECT result_body FROM items WHERE seq = ?", bind: { $0.bind(1, seq) }, row: { answer = $0.data(0) })
        return answer
    }

    /// The answers of every delivered item, by sequence number.
    package func deliveredAnswers() throws(CacheError) -> [Int64: Data] {
        var answers: [Int64: Data] = [:]
        try database.query(
            "SELECT seq, result_body FROM items WHERE state = 1 AND result_body IS NOT NULL",
            row: { answers[$0.int64(0)] = $0.data(1) })
        return answers
    }

    /// Stores a new item (its body inline, or already renamed into bodies/) and returns its
    /// sequence number once the row has committed.
    package func insert(_ record: Record, body: Data?) throws(CacheError) -> Int64 {
        try database.query(
            """
            INSERT INTO items (id, ordering_group, api_group, method, url, headers, body, body_file, body_size,
                idempotency_key, created, attempts, state) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0)
            """,
            bind: { statement in
                statement.bind(1, record.id)
                Self.bind(statement, 2, record.orderingGroup)
                Self.bind(statement, 3, record.apiGroup)
                statement.bind(4, record.method)
                statement.bind(5, record.url)
                statement.bind(6, Self.encode(record.headers))
                statement.bind(7, body)
                Self.bind(statement, 8, record.bodyFile)
                statement.bind(9, record.bodySize)
                statement.bind(10, record.idempotencyKey)
                statement.bind(11, record.created)
            })
        return database.lastInsertRowID
    }

    /// The body stored inline for `seq`, nil when it has none (no body, or a file). Unlike every
    /// other method, it may be called while another thread uses the store — from one thread at a
    /// time: it reads through a connection of its own.
    package func body(of seq: Int64) throws(CacheError) -> Data? {
        var body: Data?
        try reader.query("SELECT body FROM items WHERE seq = ?", bind: { $0.bind(1, seq) }, row: { body = $0.data(0) })
        return body
    }

    /// Writes the outcomes of several sends in one transaction (one flush for all of them): the
    /// state, counts and results of `updated`, and the removal of `removed`. A delivered item's
    /// body is dropped (its file is deleted after the commit).
    package func apply(updated: [Record], removed: [Record]) throws(CacheError) {
        guard !updated.isEmpty || !removed.isEmpty else { return }
        try database.transaction { () throws(CacheError) in
            for record in updated {
                try database.query(
                    """
                    UPDATE items SET attempts = ?, state = ?, status = ?, result_body = ?, failure = ?, last_error = ?,
                        finished = ?, created = ?, body = CASE WHEN ? = 1 THEN NULL ELSE body END,
                        body_file = CASE WHEN ? = 1 THEN NULL ELSE body_file END WHERE seq = ?
                    """,
                    bind: { statement in
                        let dropsBody: Int64 = record.state == .delivered ? 1 : 0
                        statement.bind(1, Int64(record.attempts))
                        statement.bind(2, record.state.rawValue)
                        if let status = record.status { statement.bind(3, Int64(status)) } else { statement.bindNull(3) }
                        statement.bind(4, record.resultBody)
                        Self.bind(statement, 5, record.failure)
                        Self.bind(statement, 6, record.lastError)
                        if let finished = record.finished { statement.bind(7, finished) } else { statement.bindNull(7) }
                        statement.bind(8, record.created)
                        statement.bind(9, dropsBody)
                        statement.bind(10, dropsBody)
                        statement.bind(11, record.seq)
                    })
            }
            for record in removed {
                try database.query("DELETE FROM items WHERE seq = ?", bind: { $0.bind(1, record.seq) })
            }
        }
        for record in updated where record.state == .delivered { removeBodyFile(record) }
        for record in removed { removeBodyFile(record) }
    }

    /// Removes the delivered items that finished before `finishedBefore` (milliseconds since
    /// 1970); returns how many.
    package func purgeDelivered(finishedBefore: Int64) throws(CacheError) -> Int {
        try database.query(
            "DELETE FROM items WHERE state = 1 AND finished < ?", bind: { $0.bind(1, finishedBefore) })
        return database.changes
    }

    /// Moves a copied body file from tmp/ into bodies/ under `name`, flushing it first when the
    /// store is synchronous.
    package func adoptBodyFile(temporaryName: String, as name: String) throws(CacheError) {
        let source = temporaryPath + "/" + temporaryName
        if synchronous { FileIO.flush(source) }
        try FileIO.rename(source, to: bodiesPath + "/" + name)
    }

    private func removeBodyFile(_ record: Record) {
        if let file = record.bodyFile { FileIO.remove(bodiesPath + "/" + file) }
    }

    /// Deletes tmp/'s leftovers and the body files no row names (a kill between a copy and its commit).
    private func removeUnclaimedFiles() throws(CacheError) {
        for name in FileIO.names(in: temporaryPath) { FileIO.remove(temporaryPath + "/" + name) }
        var claimed = Set<String>()
        try database.query("SELECT body_file FROM items WHERE body_file IS NOT NULL", row: { claimed.insert($0.text(0) ?? "") })
        for name in FileIO.names(in: bodiesPath) where !claimed.contains(name) { FileIO.remove(bodiesPath + "/" + name) }
    }

    private static func record(_ statement: Statement) -> Record {
        var record = Record(
            id: statement.text(1) ?? "", orderingGroup: statement.text(2), apiGroup: statement.text(3),
            method: statement.text(4) ?? "POST", url: statement.text(5) ?? "", headers: decode(statement.data(6)),
            bodyFile: statement.text(7), bodySize: statement.int64(8), idempotencyKey: statement.text(9) ?? "",
            created: statement.int64(10))
        record.seq = statement.int64(0)
        record.attempts = Int(statement.int64(11))
        record.state = Record.State(rawValue: statement.int64(12)) ?? .queued
        record.status = statement.isNull(13) ? nil : Int(statement.int64(13))
        record.resultBody = statement.data(14)
        record.failure = statement.text(15)
        record.lastError = statement.text(16)
        record.finished = statement.isNull(17) ? nil : statement.int64(17)
        return record
    }

    private static func bind(_ statement: Statement, _ index: Int32, _ text: String?) {
        if let text { statement.bind(index, text) } else { statement.bindNull(index) }
    }

    /// The headers as a JSON object (written by hand: `JSONSerialization` costs more than the
    /// rest of an enqueue).
    static func encode(_ headers: [String: String]) -> Data {
        var json = "{"
        for (index, (name, value)) in headers.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { json += "," }
            appendJSONString(name, to: &json)
            json += ":"
            appendJSONString(value, to: &json)
        }
        json += "}"
        return Data(json.utf8)
    }

    private static func appendJSONString(_ text: String, to json: inout String) {
        json += "\""
        defer { json += "\"" }
        if text.utf8.allSatisfy({ $0 >= 0x20 && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }) { return json += text }
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": json += "\\\""
            case "\\": json += "\\\\"
            case "\n": json += "\\n"
            case "\r": json += "\\r"
            case "\t": json += "\\t"
            case _ where scalar.value < 0x20: json += String(format: "\\u%04x", scalar.value)
            default: json.unicodeScalars.append(scalar)
            }
        }
    }

    static func decode(_ data: Data?) -> [String: String] {
        guard let data, let object = try? JSONSerialization.jsonObject(with: data) as? [String: String] else { return [:] }
        return object
    }
}
