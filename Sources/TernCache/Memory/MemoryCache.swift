import Foundation

/// A thread-safe in-memory LRU cache with limits on count, total cost and age (YYMemoryCache's role).
///
/// Entries live in one array of slots chained into a doubly linked list by index (most recently
/// used first) with a hash map from key to slot: get, set and remove are O(1) and allocate nothing
/// once the array has grown, and an access only relinks two indices. Age counts from the last
/// access, so expired entries always sit at the tail: every get and set drops the expired tail
/// first, with no timer. Evicted values are released after the lock is dropped.
///
/// ```swift
/// let thumbnails = MemoryCache<String, Data>(countLimit: 500, costLimit: 50 << 20, ageLimit: 600)
/// thumbnails.setValue(png, forKey: url, cost: png.count)
/// let hit = thumbnails.value(forKey: url)
/// ```
/// Thread safety: safe to use from any thread; every operation takes one lock.
// Sendable: every stored property is read and written only under `lock`, and keys and values
// are Sendable.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    @usableFromInline struct Slot {
        @usableFromInline var key: Key?
        @usableFromInline var value: Value?
        @usableFromInline var cost: Int
        @usableFromInline var accessed: UInt64
        @usableFromInline var previous: Int32
        @usableFromInline var next: Int32

        @usableFromInline init(key: Key?, value: Value?, cost: Int, accessed: UInt64, previous: Int32, next: Int32) {
            self.key = key
            self.value = value
            self.cost = cost
            self.accessed = accessed
            self.previous = previous
            self.next = next
        }
    }

    @usableFromInline static var none: Int32 { -1 }

    @usableFromInline let lock = Lock()
    @usableFromInline var slots: [Slot] = []
    @usableFromInline var index: [Key: Int32] = [:]
    @usableFromInline var freeSlots: [Int32] = []
    @usableFromInline var head: Int32 = MemoryCache.none
    @usableFromInline var tail: Int32 = MemoryCache.none
    @usableFromInline var cost = 0
    @usableFromInline var limits: (count: Int, cost: Int, ageNanoseconds: UInt64)

    /// Creates a cache.
    /// - Parameters:
    ///   - countLimit: The most entries kept; the least recently used go first. No limit by default.
    ///   - costLimit: The most total cost kept (the caller's unit, e.g. bytes). No limit by default.
    ///   - ageLimit: Seconds an entry lives after its last access. No limit by default.
    public init(countLimit: Int = .max, costLimit: Int = .max, ageLimit: TimeInterval = .infinity) {
        limits = (countLimit, costLimit, Self.nanoseconds(ageLimit))
    }

    /// The most entries kept; setting it trims at once.
    public var countLimit: Int {
        get { lock.withLock { limits.count } }
        set { trimmed { limits.count = max(0, newValue) } }
    }

    /// The most total cost kept; setting it trims at once.
    public var costLimit: Int {
        get { lock.withLock { limits.cost } }
        set { trimmed { limits.cost = max(0, newValue) } }
    }

    /// Seconds an entry lives after its last access (`.infinity`: forever); setting it trims at once.
    public var ageLimit: TimeInterval {
        get { lock.withLock { limits.ageNanoseconds == .max ? .infinity : Double(limits.ageNanoseconds) / 1e9 } }
        set { trimmed { limits.ageNanoseconds = Self.nanoseconds(newValue) } }
    }

    /// How many entries the cache holds (expired ones included until they are dropped).
    public var count: Int { lock.withLock { index.count } }

    /// The total cost of the entries held.
    public var totalCost: Int { lock.withLock { cost } }

    /// The value for `key`, which becomes the most recently used; nil when absent or expired.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        let now = MonotonicClock.now()
        var released: [Value] = []
        let value: Value? = lock.withLock {
            dropExpired(now: now, into: &released)
            guard let slot = index[key] else { return nil }
            slots[Int(slot)].accessed = now
            moveToFront(slot)
            return slots[Int(slot)].value
        }
        _ = released
        return value
    }

    /// Whether `key` has a live entry; does not count as an access.
    public func contains(_ key: Key) -> Bool {
        let now = MonotonicClock.now()
        return lock.withLock {
            guard let slot = index[key] else { return false }
            return now &- slots[Int(slot)].accessed <= limits.ageNanoseconds
        }
    }

    /// Stores `value` for `key` as the most recently used entry, then trims to the limits.
    /// - Parameter cost: The entry's cost towards `costLimit` (0 by default).
    @inlinable
    public func setValue(_ value: Value, forKey key: Key, cost entryCost: Int = 0) {
        let now = MonotonicClock.now()
        var released: [Value] = []
        lock.withLock {
            if let slot = index[key] {
                let position = Int(slot)
                if let old = slots[position].value { released.append(old) }
                cost += entryCost - slots[position].cost
                slots[position].value = value
                slots[position].cost = entryCost
                slots[position].accessed = now
                moveToFront(slot)
            } else {
                let slot = allocate(Slot(key: key, value: value, cost: entryCost, accessed: now, previous: Self.none, next: head))
                if head != Self.none { slots[Int(head)].previous = slot }
                head = slot
                if tail == Self.none { tail = slot }
                index[key] = slot
                cost += entryCost
            }
            trim(now: now, into: &released)
        }
        _ = released
    }

    /// Removes and returns the value for `key`.
    @inlinable @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        var released: [Value] = []
        lock.withLock {
            guard let slot = index[key] else { return }
            remove(slot, into: &released)
        }
        return released.first
    }

    /// Removes every entry.
    public func removeAll() {
        let old = lock.withLock { () -> [Slot] in
            defer {
                slots = []; index = [:]; freeSlots = []
                head = Self.none; tail = Self.none; cost = 0
            }
            return slots
        }
        _ = old
    }

    /// The app's memory-pressure hook (`didReceiveMemoryWarningNotification`, a `DispatchSource`
    /// memory-pressure source, …): empties the cache.
    public func handleMemoryPressure() { removeAll() }

    /// Drops the least recently used entries until at most `count` remain.
    public func trim(toCount count: Int) { trimmed(to: (count, .max, .max)) }

    /// Drops the least recently used entries until the total cost is at most `cost`.
    public func trim(toCost cost: Int) { trimmed(to: (.max, cost, .max)) }

    /// Drops the entries not accessed within the last `seconds`.
    public func trim(toAge seconds: TimeInterval) { trimmed(to: (.max, .max, Self.nanoseconds(seconds))) }

    /// The keys from most to least recently used (for inspection and tests; O(n)).
    public var keysByRecency: [Key] {
        lock.withLock {
            var keys: [Key] = []
            var slot = head
            while slot != Self.none {
                if let key = slots[Int(slot)].key { keys.append(key) }
                slot = slots[Int(slot)].next
            }
            return keys
        }
    }

    // MARK: - Under the lock

    private func trimmed(_ change: () -> Void = {}) {
        let now = MonotonicClock.now()
        var released: [Value] = []
        lock.withLock {
            change()
            trim(now: now, into: &released)
        }
    }

    private func trimmed(to bounds: (count: Int, cost: Int, ageNanoseconds: UInt64)) {
        let now = MonotonicClock.now()
        var released: [Value] = []
        lock.withLock {
            while tail != Self.none, index.count > bounds.count || cost > bounds.cost
                    || now &- slots[Int(tail)].accessed > bounds.ageNanoseconds {
                remove(tail, into: &released)
            }
        }
    }

    @usableFromInline func trim(now: UInt64, into released: inout [Value]) {
        dropExpired(now: now, into: &released)
        while tail != Self.none, index.count > limits.count || cost > limits.cost {
            remove(tail, into: &released)
        }
    }

    @inlinable @inline(__always)
    func dropExpired(now: UInt64, into released: inout [Value]) {
        while tail != Self.none, now &- slots[Int(tail)].accessed > limits.ageNanoseconds {
            remove(tail, into: &released)
        }
    }

    @usableFromInline func allocate(_ slot: Slot) -> Int32 {
        if let free = freeSlots.popLast() {
            slots[Int(free)] = slot
            return free
        }
        slots.append(slot)
        return Int32(slots.count - 1)
    }

    @usableFromInline func remove(_ slot: Int32, into released: inout [Value]) {
        let position = Int(slot)
        unlink(slot)
        if let key = slots[position].key { index.removeValue(forKey: key) }
        if let value = slots[position].value { released.append(value) }
        cost -= slots[position].cost
        slots[position] = Slot(key: nil, value: nil, cost: 0, accessed: 0, previous: Self.none, next: Self.none)
        freeSlots.append(slot)
    }

    @usableFromInline func unlink(_ slot: Int32) {
        let previous = slots[Int(slot)].previous, next = slots[Int(slot)].next
        if previous != Self.none { slots[Int(previous)].next = next } else { head = next }
        if next != Self.none { slots[Int(next)].previous = previous } else { tail = previous }
    }

    @inlinable @inline(__always)
    func moveToFront(_ slot: Int32) {
        guard slot != head else { return }
        unlink(slot)
        slots[Int(slot)].previous = Self.none
        slots[Int(slot)].next = head
        if head != Self.none { slots[Int(head)].previous = slot }
        head = slot
        if tail == Self.none { tail = slot }
    }

    private static func nanoseconds(_ seconds: TimeInterval) -> UInt64 {
        guard seconds.isFinite else { return .max }
        return UInt64(max(0, seconds) * 1e9)
    }
}
