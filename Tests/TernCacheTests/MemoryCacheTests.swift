import Foundation
import Testing
import TernCache

/// Counts its own deallocations, to see when the cache lets values go.
final class Tracked: Sendable {
    static let alive = AliveCounter()
    let id: Int
    init(_ id: Int) { self.id = id; Self.alive.change(by: 1) }
    deinit { Self.alive.change(by: -1) }
}

// Sendable: `value` is only touched under `lock`.
final class AliveCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    func change(by delta: Int) { lock.lock(); value += delta; lock.unlock() }
    var count: Int { lock.lock(); defer { lock.unlock() }; return value }
}

@Suite struct MemoryCacheTests {
    @Test func leastRecentlyUsedGoesFirstWhenTheCountLimitIsReached() {
        let cache = MemoryCache<String, Int>(countLimit: 3)
        cache.setValue(1, forKey: "a")
        cache.setValue(2, forKey: "b")
        cache.setValue(3, forKey: "c")
        #expect(cache.value(forKey: "a") == 1)  // a becomes the most recent
        cache.setValue(4, forKey: "d")  // b, the least recent, goes
        #expect(cache.keysByRecency == ["d", "a", "c"])
        #expect(cache.value(forKey: "b") == nil)
        cache.setValue(30, forKey: "c")  // replacing refreshes, does not grow
        #expect(cache.keysByRecency == ["c", "d", "a"] && cache.count == 3)
    }

    @Test func costLimitEvictsUntilTheTotalFits() {
        let cache = MemoryCache<String, String>(costLimit: 100)
        cache.setValue("x", forKey: "a", cost: 40)
        cache.setValue("y", forKey: "b", cost: 40)
        #expect(cache.totalCost == 80)
        cache.setValue("z", forKey: "c", cost: 40)
        #expect(cache.keysByRecency == ["c", "b"] && cache.totalCost == 80)
        cache.setValue("y2", forKey: "b", cost: 10)  // a replacement's cost replaces the old one
        #expect(cache.totalCost == 50)
        cache.setValue("huge", forKey: "d", cost: 500)  // larger than the limit: kept nowhere
        #expect(cache.count == 0 && cache.totalCost == 0)
    }

    @Test func ageCountsFromTheLastAccess() async throws {
        // Sleeps can overrun on a loaded machine: each check only asserts what the measured
        // times prove.
        let cache = MemoryCache<String, Int>(ageLimit: 0.3)
        let written = Date()
        cache.setValue(1, forKey: "read")
        cache.setValue(2, forKey: "idle")
        try await Task.sleep(milliseconds: 150)
        let readAt = Date()
        let refreshed = cache.value(forKey: "read")
        if readAt.timeIntervalSince(written) < 0.28 { #expect(refreshed == 1) }
        try await Task.sleep(milliseconds: 200)
        #expect(Date().timeIntervalSince(written) > 0.3)
        #expect(cache.value(forKey: "idle") == nil)  // over 0.3 s since its last access
        let checkedAt = Date()
        let survivor = cache.value(forKey: "read")
        if refreshed != nil, checkedAt.timeIntervalSince(readAt) < 0.28 { #expect(survivor == 1) }
        try await Task.sleep(milliseconds: 350)
        #expect(cache.value(forKey: "read") == nil && cache.count == 0)
    }

    @Test func limitsChangedLaterTrimAtOnce() {
        let cache = MemoryCache<Int, Int>()
        for index in 0..<10 { cache.setValue(index, forKey: index, cost: 10) }
        cache.countLimit = 6
        #expect(cache.count == 6 && cache.keysByRecency.first == 9 && cache.keysByRecency.last == 4)
        cache.costLimit = 30
        #expect(cache.keysByRecency == [9, 8, 7])
        cache.trim(toCount: 1)
        #expect(cache.keysByRecency == [9])
        cache.ageLimit = 0
        #expect(cache.count == 0)
    }

    @Test func trimmingAndRemovalOnDemand() async throws {
        let cache = MemoryCache<String, Int>()
        for index in 0..<5 { cache.setValue(index, forKey: "k\(index)", cost: 1) }
        #expect(cache.removeValue(forKey: "k2") == 2 && cache.removeValue(forKey: "k2") == nil)
        cache.trim(toCost: 2)
        #expect(cache.keysByRecency == ["k4", "k3"])
        try await Task.sleep(milliseconds: 400)
        cache.setValue(9, forKey: "fresh")
        cache.trim(toAge: 0.3)
        #expect(cache.keysByRecency == ["fresh"])
        #expect(cache.contains("fresh") && !cache.contains("k4"))
        cache.handleMemoryPressure()
        #expect(cache.count == 0 && cache.totalCost == 0)
        cache.setValue(1, forKey: "after")  // still usable after being emptied
        #expect(cache.value(forKey: "after") == 1)
    }

    @Test func evictedAndRemovedValuesAreReleased() {
        let before = Tracked.alive.count
        do {
            let cache = MemoryCache<Int, Tracked>(countLimit: 10)
            for index in 0..<100 { cache.setValue(Tracked(index), forKey: index) }
            #expect(Tracked.alive.count - before <= 10)
            cache.removeAll()
            #expect(Tracked.alive.count == before)
        }
    }

    @Test func concurrentReadersAndWritersKeepTheBooksStraight() async {
        let cache = MemoryCache<Int, Int>(countLimit: 200, costLimit: 5_000)
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    var state = UInt64(worker + 1) * 0x9E37_79B9
                    for _ in 0..<5_000 {
                        state = state &* 6_364_136_223_846_793_005 &+ 1
                        let key = Int(state >> 40) % 400
                        switch (state >> 20) % 10 {
                        case 0: cache.removeValue(forKey: key)
                        case 1...4: cache.setValue(key, forKey: key, cost: key % 50)
                        default: if let value = cache.value(forKey: key) { #expect(value == key) }
                        }
                    }
                }
            }
        }
        let keys = cache.keysByRecency
        #expect(keys.count == cache.count && keys.count <= 200 && Set(keys).count == keys.count)
        #expect(cache.totalCost == keys.reduce(0) { $0 + $1 % 50 } && cache.totalCost <= 5_000)
    }
}
