import Foundation
import TernCache

/// Where a client's response cache keeps entries, and how much of them: the directory of its
/// disk level, the limits of each level, or a disk cache of your own
/// (`ClientConfiguration.cacheStorage`). What is cached, and for how long, is the cache policy's.
/// Thread safety: a value type, safe to share.
public struct CacheStorageSettings: Sendable {
    /// Where the disk cache lives; nil uses `<user caches>/Tern/<app>/<base URL host or "default">`,
    /// where `<app>` is the bundle identifier (Apple platforms) or the executable's name.
    public var directory: URL?
    /// How the memory level is kept: its size, count and age limits. Default: 16 MB
    /// (`memoryLimit`), no count or age limit.
    public var memory: MemoryCacheSettings
    /// How the disk level is kept: every TernCache setting (count and age limits, the inline
    /// threshold, a free-space floor, `onEvent`). Default: a 100 MB size limit (`diskLimit`), the
    /// rest TernCache's defaults.
    public var disk: DiskCache.Configuration
    /// A disk cache you opened yourself (`DiskCache.open`), used as the disk level instead of one
    /// opened at `directory` with `disk`, which are then ignored. Several clients can share one:
    /// entries are keyed by method, full URL and body. Emptying one client's disk cache
    /// (`clearDiskCache`) empties it for all of them. Default nil.
    public var diskStore: DiskCache?

    /// Creates settings with the documented defaults.
    public init() {
        directory = nil
        memory = MemoryCacheSettings()
        disk = DiskCache.Configuration()
        disk.sizeLimit = 100 << 20
        diskStore = nil
    }

    /// Bytes of responses kept in memory: `memory.sizeLimit`, 16 MB by default.
    public var memoryLimit: Int {
        get { memory.sizeLimit }
        set { memory.sizeLimit = newValue }
    }

    /// Bytes of responses kept on disk (least recently used go first): `disk.sizeLimit`, 100 MB
    /// by default.
    public var diskLimit: Int64 {
        get { disk.sizeLimit }
        set { disk.sizeLimit = newValue }
    }

    /// Why these settings cannot be used, nil when they can.
    var problem: String? {
        if let problem = memory.problem { return problem }
        if diskLimit < 0 { return "cacheStorage.diskLimit must be 0 or more bytes (got \(diskLimit))" }
        return nil
    }
}
