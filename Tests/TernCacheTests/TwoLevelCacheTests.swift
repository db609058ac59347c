import Foundation
import Testing
import TernCache

@Suite struct TwoLevelCacheTests {
    @Test func aDiskHitIsPromotedToMemory() throws {
        let directory = scratchDirectory()
        do {
            let first = try Cache(directory: directory)
            try first.setData(Data("persisted".utf8), forKey: "k", extendedData: Data("meta".utf8))
            #expect(first.memory.value(forKey: "k")?.data == Data("persisted".utf8))
        }
        let second = try Cache(directory: directory)
        #expect(second.memory.value(forKey: "k") == nil)
        #expect(try second.item(forKey: "k") == CacheItem(data: Data("persisted".utf8), extendedData: Data("meta".utf8)))
        #expect(second.memory.value(forKey: "k")?.extendedData == Data("meta".utf8))
    }

    @Test func writesGoToTheLevelsAskedFor() throws {
        let cache = try Cache(directory: scratchDirectory())
        try cache.setData(Data("m".utf8), forKey: "memory-only", in: .memory)
        try cache.setData(Data("d".utf8), forKey: "disk-only", in: .disk)
        #expect(try cache.memory.value(forKey: "memory-only") != nil && (cache.disk.data(forKey: "memory-only")) == nil)
        #expect(try cache.memory.value(forKey: "disk-only") == nil && (cache.disk.data(forKey: "disk-only")) != nil)
        // Moving a key to one level removes it from the other: no level keeps an older value.
        try cache.setData(Data("d2".utf8), forKey: "memory-only", in: .disk)
        #expect(cache.memory.value(forKey: "memory-only") == nil)
        #expect(try cache.data(forKey: "memory-only") == Data("d2".utf8))
        try cache.removeData(forKey: "memory-only")
        #expect(try cache.data(forKey: "memory-only") == nil)
        try cache.removeAll()
        #expect(try cache.memory.count == 0 && (cache.disk.totalCount()) == 0)
    }

    @Test func memoryLimitsApplyInBytes() throws {
        let cache = try Cache(directory: scratchDirectory(), memoryCostLimit: 1_000)
        for index in 0..<5 { try cache.setData(bytes(400, seed: index), forKey: "k\(index)") }
        #expect(cache.memory.totalCost <= 1_000 && cache.memory.count == 2)
        #expect(try cache.disk.totalCount() == 5)
        #expect(try cache.data(forKey: "k0") == bytes(400, seed: 0))  // from disk
    }

    @Test func asyncReadsAndWrites() async throws {
        let cache = try Cache(directory: scratchDirectory())
        try await cache.writeData(bytes(50_000), forKey: "big", extendedData: Data("e".utf8))
        cache.memory.removeAll()
        let item = try await cache.readItem(forKey: "big")
        #expect(item?.data == bytes(50_000) && item?.extendedData == Data("e".utf8))
        #expect(try await cache.readItem(forKey: "absent") == nil)
        try await cache.disk.writeData(Data("x".utf8), forKey: "direct")
        #expect(try await cache.disk.readEntry(forKey: "direct")?.data == Data("x".utf8))
    }

    struct Forecast: Codable, Equatable {
        let city: String
        let highs: [Int]
    }

    @Test func codableValuesRoundTripAndMismatchesAreTypedErrors() throws {
        let cache = try Cache(directory: scratchDirectory())
        let forecast = Forecast(city: "北京", highs: [3, 5, -1])
        try cache.setValue(forecast, forKey: "forecast")
        #expect(try cache.value(Forecast.self, forKey: "forecast") == forecast)
        #expect(try cache.value(Forecast.self, forKey: "absent") == nil)
        #expect(throws: CacheError.self) { try cache.value([String].self, forKey: "forecast") }
        #expect(throws: CacheError.self) { try cache.setValue(Double.nan, forKey: "nan") }
    }
}
