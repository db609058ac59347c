import Foundation

/// A value as a `Cache` keeps it: the bytes and the caller's metadata.
/// Thread safety: a value type, safe to share.
public struct CacheItem: Sendable, Equatable {
    /// The value.
    public let data: Data
    /// The metadata stored with it, if any.
    public let extendedData: Data?

    /// Creates an item.
    public init(data: Data, extendedData: Data? = nil) {
        self.data = data
        self.extendedData = extendedData
    }

    /// What the item costs in memory, for the memory cache's cost limit.
    public var cost: Int { data.count + (extendedData?.count ?? 0) }
}

/// Where a `Cache` write goes.
/// Thread safety: a value type, safe to share.
public struct CacheLevels: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    /// Creates a set of levels.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// The in-memory LRU cache.
    public static let memory = CacheLevels(rawValue: 1)
    /// The SQLite-backed disk cache.
    public static let disk = CacheLevels(rawValue: 2)
    /// Both.
    public static let both: CacheLevels = [.memory, .disk]
}

/// A two-level cache (YYCache's role): a `MemoryCache` in front of a `DiskCache`. Reads try
/// memory first; a disk hit is copied into memory. Writes go to the levels asked for (both by
/// default). Sync and `async` APIs; the `async` ones do their disk work off the caller's thread.
///
/// ```swift
/// let cache = try Cache(directory: cachesDirectory.appendingPathComponent("weather"))
/// try cache.setData(body, forKey: key)
/// let hit = try await cache.readItem(forKey: key)
/// ```
/// Thread safety: safe to use from any thread.
public final class Cache: Sendable {
    /// The memory level; its cost is the bytes of each item.
    public let memory: MemoryCache<String, CacheItem>
    /// The disk level.
    public let disk: DiskCache

    /// Opens a two-level cache whose disk level lives in `directory`.
    /// - Parameters:
    ///   - directory: Where the disk level keeps its database and files.
    ///   - memoryCountLimit: The most items kept in memory.
    ///   - memoryCostLimit: The most bytes kept in memory; 32 MB by default.
    ///   - memoryAgeLimit: Seconds an item stays in memory after its last access.
    ///   - disk: The disk level's configuration.
    /// - Throws: What `DiskCache.open` throws.
    public init(
        directory: URL, memoryCountLimit: Int = .max, memoryCostLimit: Int = 32 << 20,
        memoryAgeLimit: TimeInterval = .infinity, disk: DiskCache.Configuration = DiskCache.Configuration()
    ) throws(CacheError) {
        memory = MemoryCache(countLimit: memoryCountLimit, costLimit: memoryCostLimit, ageLimit: memoryAgeLimit)
        self.disk = try DiskCache.open(directory, configuration: disk)
    }

    /// The item for `key` from memory, else from disk (then kept in memory too), else nil.
    public func item(forKey key: String) throws(CacheError) -> CacheItem? {
        if let item = memory.value(forKey: key) { return item }
        guard let entry = try disk.entry(forKey: key) else { return nil }
        let item = CacheItem(data: entry.data, extendedData: entry.extendedData)
        memory.setValue(item, forKey: key, cost: item.cost)
        return item
    }

    /// The value for `key`, as `item(forKey:)` finds it.
    public func data(forKey key: String) throws(CacheError) -> Data? {
        try item(forKey: key)?.data
    }

    /// Stores `data` (and optional metadata) for `key` in `levels`; the other level's entry, if
    /// any, is removed so that no level keeps an older value.
    public func setData(_ data: Data, forKey key: String, extendedData: Data? = nil, in levels: CacheLevels = .both) throws(CacheError) {
        let item = CacheItem(data: data, extendedData: extendedData)
        if levels.contains(.memory) { memory.setValue(item, forKey: key, cost: item.cost) } else { memory.removeValue(forKey: key) }
        if levels.contains(.disk) {
            try disk.setData(data, forKey: key, extendedData: extendedData)
        } else {
            try disk.removeData(forKey: key)
        }
    }

    /// Removes `key` from both levels.
    public func removeData(forKey key: String) throws(CacheError) {
        memory.removeValue(forKey: key)
        try disk.removeData(forKey: key)
    }

    /// Empties both levels.
    public func removeAll() throws(CacheError) {
        memory.removeAll()
        try disk.removeAll()
    }

    /// `item(forKey:)` with the disk read off the caller's thread. (A distinct name: an `async`
    /// overload of `item(forKey:)` would hide the synchronous one from every `async` caller.)
    public func readItem(forKey key: String) async throws(CacheError) -> CacheItem? {
        if let item = memory.value(forKey: key) { return item }
        return try await DiskCache.onIOQueue { [self] () throws(CacheError) in try item(forKey: key) }
    }

    /// `setData(_:forKey:extendedData:in:)` with the disk write off the caller's thread.
    public func writeData(
        _ data: Data, forKey key: String, extendedData: Data? = nil, in levels: CacheLevels = .both
    ) async throws(CacheError) {
        try await DiskCache.onIOQueue { [self] () throws(CacheError) in
            try setData(data, forKey: key, extendedData: extendedData, in: levels)
        }
    }
}

extension DiskCache {
    /// Where the `async` APIs do their disk work.
    static let ioQueue = DispatchQueue(label: "TernCache.io", qos: .utility, attributes: .concurrent)

    /// Runs `work` on the I/O queue and returns its result.
    static func onIOQueue<Value: Sendable>(_ work: @escaping @Sendable () throws(CacheError) -> Value) async throws(CacheError) -> Value {
        let result: Result<Value, CacheError> = await withCheckedContinuation { continuation in
            ioQueue.async { continuation.resume(returning: Result { () throws(CacheError) in try work() }) }
        }
        return try result.get()
    }

    /// `entry(forKey:)` off the caller's thread.
    public func readEntry(forKey key: String) async throws(CacheError) -> Entry? {
        try await Self.onIOQueue { [self] () throws(CacheError) in try entry(forKey: key) }
    }

    /// `setData(_:forKey:extendedData:)` off the caller's thread.
    public func writeData(_ data: Data, forKey key: String, extendedData: Data? = nil) async throws(CacheError) {
        try await Self.onIOQueue { [self] () throws(CacheError) in try setData(data, forKey: key, extendedData: extendedData) }
    }
}

extension Cache {
    /// The value for `key` decoded from JSON as `type`, or nil when absent.
    /// - Throws: `CacheError.decoding` when the stored bytes are not a `type`.
    public func value<Value: Decodable>(_ type: Value.Type, forKey key: String) throws(CacheError) -> Value? {
        guard let data = try data(forKey: key) else { return nil }
        do {
            return try JSONDecoder().decode(type, from: data)
        } catch {
            throw .decoding(description: "\(error)")
        }
    }

    /// Stores `value` for `key` as JSON.
    /// - Throws: `CacheError.encoding` when the value cannot be encoded.
    public func setValue<Value: Encodable>(_ value: Value, forKey key: String, in levels: CacheLevels = .both) throws(CacheError) {
        let data: Data
        do {
            data = try JSONEncoder().encode(value)
        } catch {
            throw .encoding(description: "\(error)")
        }
        try setData(data, forKey: key, in: levels)
    }
}
