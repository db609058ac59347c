import Foundation
import TernCache

/// The memory contenders: each sets every key, then gets them in shuffled order, checking each
/// value it gets back.
enum MemoryBaselines {
    static func tern(_ keys: [String], _ order: [String], _ value: Data) -> CacheBench.Rates {
        let cache = MemoryCache<String, Data>()
        return time(keys, order, set: { cache.setValue(value, forKey: $0, cost: 100) }, get: { cache.value(forKey: $0)?.count == 100 })
    }

    static func nsCache(_ keys: [String], _ order: [String], _ value: Data) -> CacheBench.Rates {
        let cache = NSCache<NSString, NSData>()
        let nsKeys = keys.map { $0 as NSString }
        let nsOrder = order.map { $0 as NSString }
        let object = value as NSData
        var index = 0, lookup = 0
        return time(
            keys, order,
            set: { _ in
                cache.setObject(object, forKey: nsKeys[index], cost: 100); index += 1
            },
            get: { _ in
                defer { lookup += 1 }; return cache.object(forKey: nsOrder[lookup])?.length == 100
            })
    }

    static func lockedDictionary(_ keys: [String], _ order: [String], _ value: Data) -> CacheBench.Rates {
        let lock = NSLock()
        var dictionary: [String: Data] = [:]
        return time(
            keys, order,
            set: { key in
                lock.lock(); dictionary[key] = value; lock.unlock()
            },
            get: { key in
                lock.lock(); defer { lock.unlock() }; return dictionary[key]?.count == 100
            })
    }

    private static func time(_ keys: [String], _ order: [String], set: (String) -> Void, get: (String) -> Bool) -> CacheBench.Rates {
        let setStart = now()
        for key in keys { set(key) }
        let setSeconds = now() - setStart
        var hits = 0
        let getStart = now()
        for key in order where get(key) { hits += 1 }
        let getSeconds = now() - getStart
        if hits != order.count { log("  warning: \(order.count - hits) misses") }
        return (Double(keys.count) / setSeconds, Double(order.count) / getSeconds)
    }
}

/// The disk contenders: `count` writes of `size` bytes to fresh keys, then `count` reads.
enum DiskBaselines {
    /// - Parameter recordsEveryRead: Sets `accessTimeResolution` to 0, so that every get also
    ///   records its time (batched writes), as a strict LRU would.
    static func tern(_ directory: URL, size: Int, count: Int, threshold: Int?, recordsEveryRead: Bool = false) throws -> CacheBench.Rates {
        var configuration = DiskCache.Configuration()
        if let threshold { configuration.inlineThreshold = threshold }
        if recordsEveryRead { configuration.accessTimeResolution = 0 }
        configuration.verifiesOnOpen = false
        let cache = try DiskCache.open(directory, configuration: configuration)
        let value = Data(repeating: 1, count: size)
        return try time(
            count, set: { try cache.setData(value, forKey: "key-\($0)") },
            get: { try cache.data(forKey: "key-\($0)")?.count == size })
    }

    /// SQLite as a key-value table with the disk cache's pragmas and statement caching.
    static func rawSQLite(_ directory: URL, size: Int, count: Int) throws -> CacheBench.Rates {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let database = try SQLiteDatabase(path: directory.appendingPathComponent("raw.sqlite").path)
        try database.execute(
            "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; CREATE TABLE kv (key TEXT PRIMARY KEY NOT NULL, value BLOB)")
        let value = Data(repeating: 1, count: size)
        return try time(
            count,
            set: { index in
                try database.query(
                    "INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)",
                    bind: {
                        $0.bind(1, "key-\(index)"); $0.bind(2, value)
                    })
            },
            get: { index in
                var found = 0
                try database.query(
                    "SELECT value FROM kv WHERE key = ?", bind: { $0.bind(1, "key-\(index)") }, row: { found = $0.data(0)?.count ?? 0 })
                return found == size
            })
    }

    /// One file per value with plain POSIX calls (no flush), as a file-per-key cache would.
    static func files(_ directory: URL, size: Int, count: Int) throws -> CacheBench.Rates {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let value = Data(repeating: 1, count: size)
        let base = directory.path
        return try time(
            count,
            set: { index in
                let descriptor = open(base + "/key-\(index)", O_WRONLY | O_CREAT | O_TRUNC, 0o644)
                guard descriptor >= 0 else { throw CocoaError(.fileWriteUnknown) }
                _ = value.withUnsafeBytes { write(descriptor, $0.baseAddress, size) }
                close(descriptor)
            },
            get: { index in
                let descriptor = open(base + "/key-\(index)", O_RDONLY)
                guard descriptor >= 0 else { return false }
                defer { close(descriptor) }
                var data = Data(count: size)
                let read = data.withUnsafeMutableBytes { Foundation.read(descriptor, $0.baseAddress, size) }
                return read == size
            })
    }

    private static func time(_ count: Int, set: (Int) throws -> Void, get: (Int) throws -> Bool) throws -> CacheBench.Rates {
        let setStart = now()
        for index in 0..<count { try set(index) }
        let setSeconds = now() - setStart
        var order = Array(0..<count)
        order.shuffle()
        var hits = 0
        let getStart = now()
        for index in order where try get(index) { hits += 1 }
        let getSeconds = now() - getStart
        if hits != count { log("  warning: \(count - hits) misses") }
        return (Double(count) / setSeconds, Double(count) / getSeconds)
    }
}
