import Foundation
import Testing
@testable import TernCache

/// Disk cache promises that the crash tests reach only by chance.
@Suite struct DiskCacheContractTests {
    @Test func recentUseOrderSurvivesCloseAndReopen() throws {
        let directory = scratchDirectory()
        var configuration = DiskCache.Configuration()
        configuration.accessTimeResolution = 0
        do {
            let cache = try DiskCache.open(directory, configuration: configuration)
            for key in ["a", "b", "c"] {
                try cache.setData(Data(key.utf8), forKey: key)
                Thread.sleep(forTimeInterval: 0.01)
            }
            _ = try cache.data(forKey: "a")
        }
        let reopened = try DiskCache.open(directory, configuration: configuration)
        try reopened.trim(toCount: 2)
        #expect(try reopened.keys().sorted() == ["a", "c"], "the read of a must outlive the close")
    }

    @Test func aReplacementNeverWritesIntoTheLiveValueFile() throws {
        let directory = scratchDirectory()
        let cache = try DiskCache.open(directory)
        let old = Data(repeating: 1, count: 100_000)
        try cache.setData(old, forKey: "k")
        let file = try #require(valueFiles(in: directory).first)
        // A reader that opened the old value file keeps reading the old value after a replacement.
        let reader = try FileHandle(forReadingFrom: directory.appendingPathComponent("data").appendingPathComponent(file))
        defer { try? reader.close() }
        try cache.setData(Data(repeating: 2, count: 100_000), forKey: "k")
        #expect(reader.readDataToEndOfFile() == old)
        #expect(try cache.data(forKey: "k") == Data(repeating: 2, count: 100_000))
    }
}
