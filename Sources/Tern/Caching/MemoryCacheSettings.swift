import Foundation

/// How the memory level of a client's response cache is kept (`CacheStorageSettings.memory`).
/// Entries over any limit go least recently used first; an entry that leaves memory may still be
/// on disk.
/// Thread safety: a value type, safe to share.
public struct MemoryCacheSettings: Sendable, Equatable {
    /// Bytes of response bodies kept. Default 16 MB.
    public var sizeLimit: Int
    /// Entries kept. Default `Int.max`: no limit.
    public var countLimit: Int
    /// Seconds an entry stays in memory after it was last used. Default `.infinity`: no limit.
    public var ageLimit: TimeInterval

    /// Creates settings; every parameter defaults to the documented default.
    public init(sizeLimit: Int = 16 << 20, countLimit: Int = .max, ageLimit: TimeInterval = .infinity) {
        self.sizeLimit = sizeLimit
        self.countLimit = countLimit
        self.ageLimit = ageLimit
    }

    /// Why these settings cannot be used, nil when they can.
    var problem: String? {
        if sizeLimit < 0 { return "cacheStorage.memory.sizeLimit must be 0 or more bytes (got \(sizeLimit))" }
        if countLimit < 0 { return "cacheStorage.memory.countLimit must be 0 or more (got \(countLimit))" }
        if !(ageLimit > 0) { return "cacheStorage.memory.ageLimit must be more than 0 seconds, or .infinity (got \(ageLimit))" }
        return nil
    }
}
