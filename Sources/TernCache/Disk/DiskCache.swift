import Foundation

/// A persistent key-value cache in one directory: a SQLite manifest (WAL) that keeps small values
/// inline and large ones as files, least-recently-used trimming by count, size, age and free disk
/// space, and crash safety (see `DiskStore.swift` for the layout and the guarantees).
///
/// One instance per directory within a process: `open(_:configuration:)` returns the live one if
/// the directory is already open (with the configuration it was first opened with).
///
/// ```swift
/// let cache = try DiskCache.open(cachesDirectory.appendingPathComponent("responses"))
/// try cache.setData(body, forKey: "GET https://api.example/v1/cities", extendedData: headers)
/// let body = try cache.data(forKey: "GET https://api.example/v1/cities")
/// ```
/// Thread safety: safe to use from any thread; operations on one directory are serialized.
public final class DiskCache: Sendable {
    /// How a disk cache stores and trims.
    /// Thread safety: a value type, safe to share.
    public struct Configuration: Sendable {
        /// Values up to this many bytes are stored inside SQLite, larger ones as files. 32 KB by
        /// default: measured on a 2-core Linux VM (Tern's Performance article), inline reads keep up with
        /// file reads up to 32 KB and fall to a third of them at 64 KB, while inline writes are
        /// 3–8 times faster than creating a file at every size up to 64 KB.
        public var inlineThreshold = 32 * 1024
        /// The most entries kept; the least recently used go first. No limit by default.
        public var countLimit = Int.max
        /// The most bytes of values kept. No limit by default.
        public var sizeLimit = Int64.max
        /// Seconds an entry lives after its last access; older ones read as misses and are
        /// trimmed. No limit by default.
        public var ageLimit = TimeInterval.infinity
        /// Bytes that must stay free on the volume: trimming removes entries, least recently
        /// used first, while less is free. 0 (no floor) by default.
        public var freeDiskSpaceLimit: Int64 = 0
        /// Seconds between automatic trims to the limits, in the background; 60 by default.
        /// Automatic trimming only runs when a limit is set.
        public var autoTrimInterval: TimeInterval = 60
        /// How precisely reads keep the LRU order, in seconds: a read records its time only when
        /// the entry's last recorded access is older than this (capped at a tenth of `ageLimit`).
        /// Recording costs a write; 60 s of precision is plenty for trimming. 0 records every read.
        public var accessTimeResolution: TimeInterval = 60
        /// Whether opening runs SQLite's `quick_check` (time linear in the database's size) so
        /// that a damaged database is rebuilt at once rather than failing later. True by default.
        public var verifiesOnOpen = true
        /// Told about recoveries (`CacheError.recoveredFromCorruption`); nil writes one line to
        /// standard error.
        public var onEvent: (@Sendable (CacheError) -> Void)?

        /// The defaults: no limits, 32 KB inline threshold.
        public init() {}
    }

    /// One stored value with its metadata.
    /// Thread safety: a value type, safe to share.
    public struct Entry: Sendable {
        /// The value.
        public let data: Data
        /// The metadata stored with it, if any.
        public let extendedData: Data?
        /// When it was written.
        public let modified: Date
        /// When it was last read or written before this read.
        public let lastAccess: Date
    }

    /// The cache's directory.
    public let directory: URL
    /// The configuration it was opened with.
    public let configuration: Configuration
    private let state: StoreState
    private let trimTimer: TrimTimer?

    /// Opens the cache in `directory`, creating it if needed, or returns the instance already open there.
    /// A database that is unreadable or corrupt is moved aside and rebuilt (reported through
    /// `configuration.onEvent`), never a crash.
    /// - Throws: `CacheError.sqliteUnavailable` (before anything is created) when SQLite cannot be
    ///   loaded, `.io` when the directory cannot be created, `.sqlite` when SQLite cannot open a
    ///   database there.
    public static func open(_ directory: URL, configuration: Configuration = Configuration()) throws(CacheError) -> DiskCache {
        _ = try SQLiteLibrary.shared()
        return try OpenStores.shared.instance(for: directory.standardizedFileURL) { () throws(CacheError) in
            try DiskCache(directory: directory.standardizedFileURL, configuration: configuration)
        }
    }

    private init(directory: URL, configuration: Configuration) throws(CacheError) {
        self.directory = directory
        self.configuration = configuration
        let report = configuration.onEvent ?? { FileHandle.standardError.write(Data("TernCache: \($0)\n".utf8)) }
        state = StoreState(
            store: try DiskStore(directory: directory, verify: configuration.verifiesOnOpen, onRecovery: report),
            report: report)
        let hasLimits =
            configuration.countLimit < .max || configuration.sizeLimit < .max
            || configuration.ageLimit.isFinite || configuration.freeDiskSpaceLimit > 0
        if hasLimits, configuration.autoTrimInterval > 0 {
            let timer = DispatchSource.makeTimerSource(queue: .global(qos: .utility))
            timer.schedule(deadline: .now() + configuration.autoTrimInterval, repeating: configuration.autoTrimInterval)
            timer.setEventHandler { [weak state, configuration] in try? state?.trim(to: configuration) }
            timer.resume()
            trimTimer = TrimTimer(source: timer)
        } else {
            trimTimer = nil
        }
    }

    deinit { trimTimer?.source.cancel() }

    /// The value for `key`, or nil.
    public func data(forKey key: String) throws(CacheError) -> Data? {
        try entry(forKey: key)?.data
    }

    /// The value for `key` with its metadata, or nil. An entry older than `ageLimit` (since its
    /// last access) is removed and reads as nil.
    public func entry(forKey key: String) throws(CacheError) -> Entry? {
        let now = Self.milliseconds(Date())
        let ageLimit = configuration.ageLimit
        let resolution = Int64(min(configuration.accessTimeResolution, ageLimit / 10) * 1000)
        return try state.perform { store throws(CacheError) in
            guard let item = try store.item(forKey: key, now: now, accessResolution: max(0, resolution)) else { return nil }
            if ageLimit.isFinite, Double(now - item.lastAccess) > ageLimit * 1000 {
                try store.remove(key)
                return nil
            }
            return Entry(
                data: item.data, extendedData: item.extendedData, modified: Self.date(item.modified),
                lastAccess: Self.date(item.lastAccess))
        }
    }

    /// Whether `key` has an entry (counts as an access).
    public func contains(_ key: String) throws(CacheError) -> Bool {
        try entry(forKey: key) != nil
    }

    /// Stores `data` (and optional metadata) for `key`, replacing any earlier entry.
    public func setData(_ data: Data, forKey key: String, extendedData: Data? = nil) throws(CacheError) {
        let now = Self.milliseconds(Date())
        let threshold = configuration.inlineThreshold
        try state.perform { store throws(CacheError) in
            try store.set(data, extendedData: extendedData, forKey: key, inlineThreshold: threshold, now: now)
        }
    }

    /// Removes the entry for `key`, if any.
    public func removeData(forKey key: String) throws(CacheError) {
        try state.perform { store throws(CacheError) in try store.remove(key) }
    }

    /// Removes every entry whose key starts with `prefix` (give related keys a common prefix to
    /// remove them together).
    /// - Returns: How many entries were removed.
    @discardableResult
    public func removeData(forKeysWithPrefix prefix: String) throws(CacheError) -> Int {
        try state.perform { store throws(CacheError) in try store.remove(keysWithPrefix: prefix) }
    }

    /// Removes every entry.
    public func removeAll() throws(CacheError) {
        try state.perform { store throws(CacheError) in try store.removeAll() }
    }

    /// The number of entries.
    public func totalCount() throws(CacheError) -> Int {
        try state.perform { store throws(CacheError) in try store.totals().count }
    }

    /// The total size of the values, in bytes.
    public func totalSize() throws(CacheError) -> Int64 {
        try state.perform { store throws(CacheError) in try store.totals().size }
    }

    /// Every key, least recently used first.
    public func keys() throws(CacheError) -> [String] {
        try state.perform { store throws(CacheError) in try store.keys() }
    }

    /// Trims to the configured count, size, age and free-space limits now, in one transaction.
    public func trimToLimits() throws(CacheError) {
        try state.trim(to: configuration)
    }

    /// Removes the least recently used entries until at most `count` remain.
    public func trim(toCount count: Int) throws(CacheError) {
        try state.perform { store throws(CacheError) in _ = try store.trim(count: count, size: .max, accessedBefore: nil) }
    }

    /// Removes the least recently used entries until the values take at most `size` bytes.
    public func trim(toSize size: Int64) throws(CacheError) {
        try state.perform { store throws(CacheError) in _ = try store.trim(count: .max, size: size, accessedBefore: nil) }
    }

    /// Removes the entries not accessed within the last `seconds`.
    public func trim(toAge seconds: TimeInterval) throws(CacheError) {
        let cutoff = Self.milliseconds(Date().addingTimeInterval(-seconds))
        try state.perform { store throws(CacheError) in _ = try store.trim(count: .max, size: .max, accessedBefore: cutoff) }
    }

    /// SQLite's `PRAGMA integrity_check` verdict for the manifest: "ok" when sound.
    public func integrityCheck() throws(CacheError) -> String {
        try state.perform { store throws(CacheError) in try store.integrityCheck() }
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
    static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }
}

/// The store behind a `DiskCache`, under its lock; rebuilt when SQLite reports corruption mid-use.
// Sendable: `store` is only touched under `lock`.
final class StoreState: @unchecked Sendable {
    private let lock = Lock()
    private var store: DiskStore
    private let report: @Sendable (CacheError) -> Void

    init(store: DiskStore, report: @escaping @Sendable (CacheError) -> Void) {
        self.store = store
        self.report = report
    }

    /// Runs `body` on the store under the lock. When SQLite says the database is corrupt, the
    /// store is rebuilt empty (reported) and the error is thrown to this caller.
    func perform<Result>(_ body: (DiskStore) throws(CacheError) -> Result) throws(CacheError) -> Result {
        lock.lock.lock()
        defer { lock.lock.unlock() }
        do {
            return try body(store)
        } catch {
            if case .sqlite(let code, _, _) = error, SQLiteDatabase.isCorruption(code) {
                let directory = store.directory
                store.close()
                if let rebuilt = try? DiskStore(rebuilding: directory, onRecovery: report) { store = rebuilt }
            }
            throw error
        }
    }

    /// Trims to a configuration's limits, including its free-disk-space floor.
    func trim(to configuration: DiskCache.Configuration) throws(CacheError) {
        let cutoff =
            configuration.ageLimit.isFinite
            ? DiskCache.milliseconds(Date().addingTimeInterval(-configuration.ageLimit)) : nil
        try perform { store throws(CacheError) in
            var sizeLimit = configuration.sizeLimit
            if configuration.freeDiskSpaceLimit > 0, let free = FileIO.freeSpace(at: store.directory.path),
                free < configuration.freeDiskSpaceLimit
            {
                let size = try store.totals().size
                sizeLimit = min(sizeLimit, max(0, size - (configuration.freeDiskSpaceLimit - free)))
            }
            try store.trim(count: configuration.countLimit, size: sizeLimit, accessedBefore: cutoff)
        }
    }
}

/// The automatic-trim timer, storable in a Sendable class.
// Sendable: dispatch sources are thread-safe; the handler is set once before `resume()`.
struct TrimTimer: @unchecked Sendable {
    let source: any DispatchSourceTimer
}

/// The disk caches open in this process, by directory: one instance per directory.
// Sendable: `stores` is only touched under `lock`.
final class OpenStores: @unchecked Sendable {
    static let shared = OpenStores()
    private final class Weak { weak var cache: DiskCache? }
    private let lock = Lock()
    private var stores: [String: Weak] = [:]

    func instance(for directory: URL, make: () throws(CacheError) -> DiskCache) throws(CacheError) -> DiskCache {
        lock.lock.lock()
        defer { lock.lock.unlock() }
        if let live = stores[directory.path]?.cache { return live }
        let cache = try make()
        let entry = Weak()
        entry.cache = cache
        stores = stores.filter { $0.value.cache != nil }
        stores[directory.path] = entry
        return cache
    }
}
