import Foundation
import TernCache

/// A client's response cache: a `MemoryCache` of decoded entries in front of a `DiskCache` (the
/// one the configuration gives, or one opened on first use; if that cannot be opened, the cache
/// works from memory and says so once on standard error). Cache failures never fail a request: a
/// read that fails is a miss, a write that fails is skipped.
/// Thread safety: safe to use from any thread.
final class ResponseCache: Sendable {
    private enum Disk {
        case unopened
        case open(DiskCache)
        /// The last open failed at this uptime (ns); it is tried again `reopenDelay` later: a
        /// locked device (data protection) or a full disk should not switch caching off for good.
        case unavailable(since: UInt64)
    }

    let memory: MemoryCache<String, CachedResponse>
    let directory: URL
    private let diskConfiguration: DiskCache.Configuration
    private let reopenDelay: TimeInterval
    private let disk: Locked<Disk>
    /// The keys whose entries a background revalidation is renewing now.
    private let revalidating = Locked<Set<String>>([])

    /// A cache whose disk level is `store` when given (already open, maybe shared with other
    /// clients), or one opened at `directory` with `disk` on first use.
    init(
        directory: URL, memory settings: MemoryCacheSettings, disk: DiskCache.Configuration, store: DiskCache? = nil,
        reopenDelay: TimeInterval = 30
    ) {
        memory = MemoryCache(countLimit: settings.countLimit, costLimit: settings.sizeLimit, ageLimit: settings.ageLimit)
        self.directory = store?.directory ?? directory
        self.diskConfiguration = disk
        self.disk = Locked(store.map(Disk.open) ?? .unopened)
        self.reopenDelay = reopenDelay
    }

    /// Marks `key`'s entry as being revalidated in the background; false when it already is
    /// (one background revalidation per entry at a time).
    func beginRevalidating(_ key: String) -> Bool {
        revalidating.withLock { $0.insert(key).inserted }
    }

    /// The background revalidation of `key`'s entry ended.
    func endRevalidating(_ key: String) {
        _ = revalidating.withLock { $0.remove(key) }
    }

    /// A cache whose disk level has TernCache's defaults but for its size limit.
    convenience init(directory: URL, memoryLimit: Int, diskLimit: Int64, reopenDelay: TimeInterval = 30) {
        var disk = DiskCache.Configuration()
        disk.sizeLimit = diskLimit
        self.init(directory: directory, memory: MemoryCacheSettings(sizeLimit: memoryLimit), disk: disk, reopenDelay: reopenDelay)
    }

    /// `<user caches>/Tern/<app>/<host of the base URL, or "default">` (see `appIdentifier`).
    static func defaultDirectory(baseURL: String?, app: String = appIdentifier) -> URL {
        let caches =
            FileManager.default.urls(for: .cachesDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        let host = baseURL.flatMap { URL(string: $0)?.host } ?? "default"
        return caches.appendingPathComponent("Tern").appendingPathComponent(app)
            .appendingPathComponent(host.isEmpty ? "default" : host)
    }

    /// The app's bundle identifier (Apple platforms) or the executable's name (Linux, command-line
    /// tools): a non-sandboxed Mac and Linux share one caches directory between every program of
    /// the user, and one program's cache must not be another's (or be cleaned by it).
    static var appIdentifier: String {
        let name = Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName
        let safe = String(name.map { $0 == "/" || $0 == ":" ? "_" : $0 })
        return safe.isEmpty || safe == "." || safe == ".." ? "app" : safe
    }

    /// The disk level, opened on first use.
    private var diskCache: DiskCache? {
        disk.withLock { state -> DiskCache? in
            switch state {
            case .open(let cache): return cache
            case .unavailable(let since)
            where DispatchTime.now().uptimeNanoseconds - since < UInt64(reopenDelay * 1e9): return nil
            case .unopened, .unavailable:
                let firstFailure = if case .unopened = state { true } else { false }
                do {
                    let cache = try DiskCache.open(directory, configuration: diskConfiguration)
                    state = .open(cache)
                    return cache
                } catch {
                    if firstFailure {
                        // Without SQLite a later attempt cannot succeed: no promise to try again.
                        let retry =
                            if case .sqliteUnavailable? = error as? CacheError { "" } else { ", trying again every \(Int(reopenDelay)) s" }
                        let message =
                            "Tern: the disk cache at \(directory.path) is unavailable (\(error)); caching in memory only\(retry)\n"
                        FileHandle.standardError.write(Data(message.utf8))
                    }
                    state = .unavailable(since: DispatchTime.now().uptimeNanoseconds)
                    return nil
                }
            }
        }
    }

    /// The disk level if it is already open: writes that do not target the disk use it to
    /// remove an older entry without opening (and creating) a disk cache for nothing.
    private var openedDiskCache: DiskCache? {
        disk.withLock { state in
            if case .open(let cache) = state { cache } else { nil }
        }
    }

    /// The memory entry for `key`, if any.
    func memoryEntry(for key: CacheKey) -> CachedResponse? {
        memory.value(forKey: key.stored).flatMap { $0.keyText == key.text ? $0 : nil }
    }

    /// The disk entry for `key`, copied into memory; blocking, so call it off the main thread.
    func diskEntry(for key: CacheKey) -> CachedResponse? {
        guard let entry = try? diskCache?.entry(forKey: key.stored), let metadata = entry.extendedData,
            let response = CachedResponse(body: entry.data, metadata: metadata), response.keyText == key.text
        else { return nil }
        memory.setValue(response, forKey: key.stored, cost: response.body.count)
        return response
    }

    /// Stores `response` in the levels asked for and removes it from the others.
    func store(_ response: CachedResponse, for key: CacheKey, in write: CachePolicy.Write) {
        if write.contains(.memory) {
            memory.setValue(response, forKey: key.stored, cost: response.body.count)
        } else {
            memory.removeValue(forKey: key.stored)
        }
        if write.contains(.disk) {
            try? diskCache?.setData(response.body, forKey: key.stored, extendedData: response.metadata)
        } else {
            try? openedDiskCache?.removeData(forKey: key.stored)
        }
    }

    /// Removes the entry for `key` from both levels.
    func remove(_ key: CacheKey) {
        memory.removeValue(forKey: key.stored)
        try? diskCache?.removeData(forKey: key.stored)
    }

    /// Removes every entry whose stored key starts with `prefix`.
    func remove(prefix: String) -> Int {
        remove(prefixes: [prefix], disk: diskCache)
    }

    /// Removes every entry of the endpoints of `urls` (their query ignored), from memory and from
    /// disk when the disk level is open or was created before (so that an entry a previous run
    /// stored goes too); a client that never cached creates nothing.
    func invalidate(_ urls: [URL]) {
        let prefixes = urls.compactMap(CacheKey.prefix(for:))
        guard !prefixes.isEmpty else { return }
        _ = remove(prefixes: prefixes, disk: openedDiskCache ?? (FileManager.default.fileExists(atPath: directory.path) ? diskCache : nil))
    }

    /// Removes the entries whose stored keys start with one of `prefixes` from memory and from
    /// `disk`; how many, the larger of the two levels' counts.
    private func remove(prefixes: [String], disk: DiskCache?) -> Int {
        let inMemory = memory.keysByRecency.filter { key in prefixes.contains { key.hasPrefix($0) } }
        inMemory.forEach { memory.removeValue(forKey: $0) }
        let onDisk = prefixes.reduce(0) { $0 + ((try? disk?.removeData(forKeysWithPrefix: $1)) ?? 0) }
        return max(inMemory.count, onDisk)
    }

    /// Empties both levels.
    func removeAll() {
        removeAllFromMemory()
        removeAllFromDisk()
    }

    /// Empties the memory level.
    func removeAllFromMemory() {
        memory.removeAll()
    }

    /// Empties the disk level, if it is open or can be opened.
    func removeAllFromDisk() {
        try? diskCache?.removeAll()
    }

    /// Bytes held: the disk level's values, or the memory level's when there is no disk.
    func totalSize() -> Int64 {
        if let size = try? diskCache?.totalSize() { return max(size, Int64(memory.totalCost)) }
        return Int64(memory.totalCost)
    }
}
