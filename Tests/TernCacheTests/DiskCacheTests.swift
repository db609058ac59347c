import Foundation
import Testing
@testable import TernCache

@Suite struct DiskCacheTests {
    @Test func valuesOfEverySizeRoundTripInlineOrAsFiles() throws {
        let directory = scratchDirectory()
        let cache = try DiskCache.open(directory)
        let threshold = cache.configuration.inlineThreshold
        let sizes = [0, 1, threshold - 1, threshold, threshold + 1, 5 << 20]
        for size in sizes {
            try cache.setData(bytes(size, seed: size), forKey: "size-\(size)", extendedData: Data("meta \(size)".utf8))
        }
        for size in sizes {
            let entry = try #require(try cache.entry(forKey: "size-\(size)"))
            #expect(entry.data == bytes(size, seed: size), "size \(size)")
            #expect(entry.extendedData == Data("meta \(size)".utf8))
        }
        // Only the values above the threshold became files.
        #expect(valueFiles(in: directory).count == 2)
        #expect(try cache.totalCount() == sizes.count)
        #expect(try cache.totalSize() == Int64(sizes.reduce(0, +)))
        #expect(try cache.data(forKey: "absent") == nil)
    }

    @Test func unicodeEmptyAndLongKeys() throws {
        let cache = try DiskCache.open(scratchDirectory())
        let keys = ["北京/天气?q=晴 🌧", "", String(repeating: "长", count: 10_000), "a'b\"c;DROP TABLE entries;--", "\0mid\0dle"]
        for (index, key) in keys.enumerated() { try cache.setData(Data([UInt8(index)]), forKey: key) }
        for (index, key) in keys.enumerated() { #expect(try cache.data(forKey: key) == Data([UInt8(index)]), "\(key.prefix(20))") }
        #expect(Set(try cache.keys()) == Set(keys))
    }

    @Test func replacingAndRemovingDeleteTheOldFile() throws {
        let directory = scratchDirectory()
        let cache = try DiskCache.open(directory)
        let big = cache.configuration.inlineThreshold + 1
        try cache.setData(bytes(big), forKey: "k")
        try cache.setData(bytes(big, seed: 1), forKey: "k")  // file → file
        #expect(valueFiles(in: directory).count == 1)
        try cache.setData(Data("small".utf8), forKey: "k")  // file → inline
        #expect(try valueFiles(in: directory).isEmpty && (cache.data(forKey: "k")) == Data("small".utf8))
        try cache.setData(bytes(big), forKey: "k")
        try cache.removeData(forKey: "k")
        #expect(try valueFiles(in: directory).isEmpty && (cache.data(forKey: "k")) == nil)
        try cache.setData(bytes(big), forKey: "a")
        try cache.setData(Data("x".utf8), forKey: "b")
        try cache.removeAll()
        #expect(try valueFiles(in: directory).isEmpty && (cache.totalCount()) == 0)
    }

    @Test func removingByPrefixTakesExactlyTheKeysThatStartWithIt() throws {
        let directory = scratchDirectory()
        let cache = try DiskCache.open(directory)
        for key in ["a1-x", "a1-y", "a1", "a10-z", "a2-x", "b", "a1-北京"] {
            try cache.setData(key == "a1-y" ? bytes(100_000) : Data(key.utf8), forKey: key)
        }
        #expect(try cache.removeData(forKeysWithPrefix: "a1-") == 3)
        #expect(try cache.keys().sorted() == ["a1", "a10-z", "a2-x", "b"])
        #expect(valueFiles(in: directory).isEmpty)
        #expect(try cache.removeData(forKeysWithPrefix: "zz") == 0)
    }

    @Test func oneInstancePerDirectoryAndPersistenceAcrossInstances() throws {
        let directory = scratchDirectory()
        do {
            let first = try DiskCache.open(directory)
            #expect(try DiskCache.open(directory.appendingPathComponent(".")) === first)
            try first.setData(Data("kept".utf8), forKey: "k")
            try first.setData(bytes(100_000), forKey: "big")
        }
        let reopened = try DiskCache.open(directory)
        #expect(try reopened.data(forKey: "k") == Data("kept".utf8))
        #expect(try reopened.data(forKey: "big") == bytes(100_000))
    }

    @Test func trimmingRemovesTheLeastRecentlyUsed() throws {
        let directory = scratchDirectory()
        var configuration = DiskCache.Configuration()
        configuration.accessTimeResolution = 0  // every read counts, even a millisecond later
        let cache = try DiskCache.open(directory, configuration: configuration)
        for index in 0..<10 {
            try cache.setData(bytes(index == 3 ? 50_000 : 1_000), forKey: "k\(index)")
            Thread.sleep(forTimeInterval: 0.002)  // distinct millisecond timestamps
        }
        _ = try cache.data(forKey: "k0")  // k0 becomes the most recent
        Thread.sleep(forTimeInterval: 0.002)
        try cache.trim(toCount: 5)
        #expect(Set(try cache.keys()) == ["k0", "k6", "k7", "k8", "k9"])
        try cache.trim(toSize: 2_000)
        #expect(try cache.keys() == ["k9", "k0"])
        try cache.setData(bytes(50_000), forKey: "file")
        try cache.trim(toCount: 0)
        #expect(try cache.totalCount() == 0 && valueFiles(in: directory).isEmpty)
    }

    @Test func readsRecordTheirTimeAtTheConfiguredResolution() async throws {
        var configuration = DiskCache.Configuration()
        configuration.accessTimeResolution = 0.25
        let cache = try DiskCache.open(scratchDirectory(), configuration: configuration)
        try cache.setData(Data("a".utf8), forKey: "a")
        try cache.setData(Data("b".utf8), forKey: "b")
        let written = try #require(try cache.entry(forKey: "a")).lastAccess
        _ = try cache.data(forKey: "a")  // within the resolution: not recorded
        #expect(try cache.entry(forKey: "a")?.lastAccess == written)
        try await Task.sleep(milliseconds: 300)
        _ = try cache.data(forKey: "a")  // older than the resolution: recorded
        let recorded = try #require(try cache.entry(forKey: "a")).lastAccess
        #expect(recorded.timeIntervalSince(written) >= 0.25)
        #expect(try cache.keys() == ["b", "a"])  // and it moved "a" up the LRU order
    }

    @Test func ageLimitsExpireOnReadAndOnTrim() async throws {
        var configuration = DiskCache.Configuration()
        configuration.ageLimit = 0.3
        let cache = try DiskCache.open(scratchDirectory(), configuration: configuration)
        let written = Date()
        try cache.setData(Data("old".utf8), forKey: "old")
        try cache.setData(Data("read".utf8), forKey: "read")
        try await Task.sleep(milliseconds: 150)
        let readAt = Date()
        let refreshed = try cache.data(forKey: "read")
        if readAt.timeIntervalSince(written) < 0.28 { #expect(refreshed != nil) }
        try await Task.sleep(milliseconds: 200)
        #expect(try cache.data(forKey: "old") == nil)  // expired: a miss, and removed
        if refreshed != nil, Date().timeIntervalSince(readAt) < 0.28 { #expect(try cache.totalCount() == 1) }
        try await Task.sleep(milliseconds: 350)
        try cache.trimToLimits()
        #expect(try cache.totalCount() == 0)
        try cache.setData(Data("x".utf8), forKey: "new")
        try cache.trim(toAge: 10)
        #expect(try cache.totalCount() == 1)
    }

    @Test func trimToLimitsAppliesCountAndSizeTogether() throws {
        var configuration = DiskCache.Configuration()
        configuration.countLimit = 8
        configuration.sizeLimit = 5_000
        let cache = try DiskCache.open(scratchDirectory(), configuration: configuration)
        for index in 0..<20 { try cache.setData(bytes(500), forKey: "k\(index)") }
        try cache.trimToLimits()
        #expect(try cache.totalCount() == 8 && (cache.totalSize()) <= 5_000)
        for index in 0..<20 { try cache.setData(bytes(1_000), forKey: "k\(index)") }
        try cache.trimToLimits()
        #expect(try cache.totalCount() == 5)
    }

    @Test func aFreeSpaceFloorBeyondTheDiskEmptiesTheCache() throws {
        var configuration = DiskCache.Configuration()
        configuration.freeDiskSpaceLimit = Int64.max / 2
        let cache = try DiskCache.open(scratchDirectory(), configuration: configuration)
        for index in 0..<5 { try cache.setData(bytes(2_000), forKey: "k\(index)") }
        try cache.trimToLimits()
        #expect(try cache.totalCount() == 0)
    }

    @Test func filesWithoutRowsAndRowsWithoutFilesAreReconciledOnOpen() throws {
        let directory = scratchDirectory()
        let data = directory.appendingPathComponent("data")
        let tmp = directory.appendingPathComponent("tmp")
        let big = DiskCache.Configuration().inlineThreshold * 2
        let lostFile: String
        do {
            let cache = try DiskCache.open(directory)
            try cache.setData(bytes(big), forKey: "lost")
            lostFile = try #require(valueFiles(in: directory).first)
            try cache.setData(bytes(big, seed: 1), forKey: "intact")
            try cache.setData(Data("inline".utf8), forKey: "inline")
        }
        // What a kill can leave: an orphan value file and a half-written temporary one; and what
        // a user clearing files by hand can do: a row whose file is gone.
        try bytes(10).write(to: data.appendingPathComponent("orphan"))
        try bytes(10).write(to: tmp.appendingPathComponent("half-written"))
        try FileManager.default.removeItem(at: data.appendingPathComponent(lostFile))

        let reopened = try DiskCache.open(directory)
        #expect(valueFiles(in: directory).count == 1 && !valueFiles(in: directory).contains("orphan"))
        #expect((try? FileManager.default.contentsOfDirectory(atPath: tmp.path)) == [])
        #expect(try reopened.keys().sorted() == ["inline", "intact"])  // the row without a file went at open
        #expect(try reopened.data(forKey: "intact") == bytes(big, seed: 1))
    }

    @Test func aDamagedValueFileReadsAsAMissAndIsRemoved() throws {
        let directory = scratchDirectory()
        let cache = try DiskCache.open(directory)
        let big = cache.configuration.inlineThreshold * 2
        try cache.setData(bytes(big), forKey: "short")
        let file = directory.appendingPathComponent("data").appendingPathComponent(try #require(valueFiles(in: directory).first))
        try bytes(big / 2).write(to: file)
        #expect(try cache.data(forKey: "short") == nil)
        #expect(try cache.totalCount() == 0 && valueFiles(in: directory).isEmpty)
        try cache.setData(bytes(big), forKey: "gone")
        try FileManager.default.removeItem(
            at: directory.appendingPathComponent("data").appendingPathComponent(try #require(valueFiles(in: directory).first)))
        #expect(try cache.data(forKey: "gone") == nil)
        #expect(try cache.totalCount() == 0)
    }

    @Test func concurrentReadersAndWritersLeaveASoundStore() async throws {
        let cache = try DiskCache.open(scratchDirectory())
        let threshold = cache.configuration.inlineThreshold
        let failures = Mutex<[String]>([])
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for step in 0..<150 {
                        let key = "k\((worker * 7 + step) % 24)"
                        do {
                            switch step % 5 {
                            case 0, 1:
                                try cache.setData(
                                    bytes(step % 3 == 0 ? threshold + 10 : 200, seed: step), forKey: key,
                                    extendedData: Data("\(step)".utf8))
                            case 2: try cache.removeData(forKey: key)
                            default:
                                if let entry = try cache.entry(forKey: key),
                                    let seed = entry.extendedData.flatMap({ Int(String(decoding: $0, as: UTF8.self)) }),
                                    entry.data != bytes(seed % 3 == 0 ? threshold + 10 : 200, seed: seed)
                                {
                                    failures.withLock { $0.append("torn value for \(key)") }
                                }
                            }
                        } catch {
                            failures.withLock { $0.append("\(error)") }
                        }
                    }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(try cache.integrityCheck() == "ok")
    }

    /// A store that another connection holds locked for a moment (as the last connection of a
    /// store being released does while it checkpoints the WAL, or another process) still opens:
    /// the open waits for the lock instead of failing with SQLITE_BUSY.
    @Test func openingWaitsForAnotherConnectionsLock() async throws {
        let directory = scratchDirectory()
        try DiskCache.open(directory).setData(Data("kept".utf8), forKey: "k")  // released at once
        let path = directory.appendingPathComponent("manifest.sqlite").path
        let released = Mutex(false)
        let locked: Bool = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                // Exclusive locking mode: the connection keeps the file locked until it closes.
                guard let other = try? SQLiteDatabase(path: path),
                    (try? other.execute("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; COMMIT;")) != nil
                else { return continuation.resume(returning: false) }
                continuation.resume(returning: true)
                usleep(300_000)
                released.withLock { $0 = true }
                other.close()
            }
        }
        try #require(locked)
        // Nothing else holds the store in this process: this open makes a new connection.
        let reopened = try DiskCache.open(directory)
        #expect(released.withLock { $0 }, "the open returned while the other connection held the lock")
        #expect(try reopened.data(forKey: "k") == Data("kept".utf8))
    }
}
