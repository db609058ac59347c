import Foundation

/// The state of a `MemoryCache`: entries in parallel arrays indexed by slot, chained into a doubly
/// linked list by index (most recently used at `head`), and a hash map from key to slot. A hit
/// touches its own link (with the value beside it) and its neighbours' links; keys sit apart, read
/// only on eviction.
/// Not thread-safe: `MemoryCache` calls it under its lock.
@usableFromInline
struct LRUStorage<Key: Hashable, Value> {
    /// A slot's place in the list and its bookkeeping.
    @usableFromInline struct Link {
        @usableFromInline var previous: Int32
        @usableFromInline var next: Int32
        @usableFromInline var cost: Int
        /// `MonotonicClock` nanoseconds of the last access.
        @usableFromInline var accessed: UInt64
        /// Kept beside the links: a hit reads it from the cache line it just updated.
        @usableFromInline var value: Value?

        @inlinable init(previous: Int32, next: Int32, cost: Int, accessed: UInt64, value: Value?) {
            self.previous = previous
            self.next = next
            self.cost = cost
            self.accessed = accessed
            self.value = value
        }
    }

    @usableFromInline static var none: Int32 { -1 }

    @usableFromInline var links: [Link] = []
    @usableFromInline var keys: [Key?] = []
    @usableFromInline var index: [Key: Int32] = [:]
    @usableFromInline var freeSlots: [Int32] = []
    @usableFromInline var head: Int32 = Self.none
    @usableFromInline var tail: Int32 = Self.none
    @usableFromInline var cost = 0
    @usableFromInline var countLimit: Int
    @usableFromInline var costLimit: Int
    /// Nanoseconds; `.max` for no limit.
    @usableFromInline var ageLimit: UInt64

    init(countLimit: Int, costLimit: Int, ageLimit: UInt64) {
        self.countLimit = countLimit
        self.costLimit = costLimit
        self.ageLimit = ageLimit
    }

    static func nanoseconds(_ seconds: TimeInterval) -> UInt64 {
        guard seconds.isFinite else { return .max }
        return UInt64(max(0, seconds) * 1e9)
    }

    @inlinable
    mutating func value(forKey key: Key, now: UInt64, released: inout [Value]) -> Value? {
        dropExpired(now: now, released: &released)
        guard let slot = index[key] else { return nil }
        links[Int(slot)].accessed = now
        moveToFront(slot)
        return links[Int(slot)].value
    }

    func contains(_ key: Key, now: UInt64) -> Bool {
        guard let slot = index[key] else { return false }
        return now &- links[Int(slot)].accessed < ageLimit
    }

    @inlinable
    mutating func setValue(_ value: Value, forKey key: Key, cost entryCost: Int, now: UInt64, released: inout [Value]) {
        if let slot = index[key] {
            let position = Int(slot)
            if let old = links[position].value { released.append(old) }
            links[position].value = value
            cost += entryCost - links[position].cost
            links[position].cost = entryCost
            links[position].accessed = now
            moveToFront(slot)
        } else {
            let link = Link(previous: Self.none, next: head, cost: entryCost, accessed: now, value: value)
            let slot: Int32
            if let free = freeSlots.popLast() {
                slot = free
                links[Int(slot)] = link
                keys[Int(slot)] = key
            } else {
                slot = Int32(links.count)
                links.append(link)
                keys.append(key)
            }
            if head != Self.none { links[Int(head)].previous = slot }
            head = slot
            if tail == Self.none { tail = slot }
            index[key] = slot
            cost += entryCost
        }
        trim(now: now, released: &released)
    }

    @inlinable
    mutating func trim(now: UInt64, released: inout [Value]) {
        dropExpired(now: now, released: &released)
        while tail != Self.none, index.count > countLimit || cost > costLimit {
            remove(tail, released: &released)
        }
    }

    mutating func trim(toCount count: Int, cost maximumCost: Int, age: UInt64, now: UInt64, released: inout [Value]) {
        while tail != Self.none, index.count > count || cost > maximumCost || now &- links[Int(tail)].accessed >= age {
            remove(tail, released: &released)
        }
    }

    /// Expired entries are always at the tail: age counts from the last access.
    @inlinable
    mutating func dropExpired(now: UInt64, released: inout [Value]) {
        guard ageLimit != .max else { return }  // spares a hit a read of the (cold) tail
        while tail != Self.none, now &- links[Int(tail)].accessed >= ageLimit {
            remove(tail, released: &released)
        }
    }

    @inlinable
    mutating func remove(_ slot: Int32, released: inout [Value]) {
        let position = Int(slot)
        unlink(slot)
        if let key = keys[position] { index.removeValue(forKey: key) }
        if let value = links[position].value { released.append(value) }
        cost -= links[position].cost
        keys[position] = nil
        links[position] = Link(previous: Self.none, next: Self.none, cost: 0, accessed: 0, value: nil)
        freeSlots.append(slot)
    }

    /// Empties the storage and returns the old values, to be released outside the lock.
    mutating func removeAll() -> [Link] {
        defer {
            links = []; keys = []; index = [:]; freeSlots = []
            head = Self.none; tail = Self.none; cost = 0
        }
        return links
    }

    var keysByRecency: [Key] {
        var result: [Key] = []
        var slot = head
        while slot != Self.none {
            if let key = keys[Int(slot)] { result.append(key) }
            slot = links[Int(slot)].next
        }
        return result
    }

    @inlinable
    mutating func unlink(_ slot: Int32) {
        let previous = links[Int(slot)].previous, next = links[Int(slot)].next
        if previous != Self.none { links[Int(previous)].next = next } else { head = next }
        if next != Self.none { links[Int(next)].previous = previous } else { tail = previous }
    }

    @inlinable
    mutating func moveToFront(_ slot: Int32) {
        guard slot != head else { return }
        unlink(slot)
        links[Int(slot)].previous = Self.none
        links[Int(slot)].next = head
        if head != Self.none { links[Int(head)].previous = slot }
        head = slot
        if tail == Self.none { tail = slot }
    }
}
