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
// Sendable: the storage is only read and written under `lock`, and keys and values are Sendable.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: @unchecked Sendable {
    @usableFromInline let lock = Lock()
    /// All mutable state, behind a pointer: mutating it through `pointee` needs no dynamic
    /// exclusivity check, which for class properties costs more than the whole LRU update.
    @usableFromInline let storage: UnsafeMutablePointer<LRUStorage<Key, Value>>

    /// Creates a cache.
    /// - Parameters:
    ///   - countLimit: The most entries kept; the least recently used go first. No limit by default.
    ///   - costLimit: The most total cost kept (the caller's unit, e.g. bytes). No limit by default.
    ///   - ageLimit: Seconds an entry lives after its last access. No limit by default.
    public init(countLimit: Int = .max, costLimit: Int = .max, ageLimit: TimeInterval = .infinity) {
        storage = .allocate(capacity: 1)
        storage.initialize(
            to: LRUStorage(
                countLimit: max(0, countLimit), costLimit: max(0, costLimit),
                ageLimit: LRUStorage<Key, Value>.nanoseconds(ageLimit)))
    }

    deinit {
        storage.deinitialize(count: 1)
        storage.deallocate()
    }

    /// The most entries kept; setting it trims at once.
    public var countLimit: Int {
        get { lock.withLock { storage.pointee.countLimit } }
        set { trimmed { $0.countLimit = max(0, newValue) } }
    }

    /// The most total cost kept; setting it trims at once.
    public var costLimit: Int {
        get { lock.withLock { storage.pointee.costLimit } }
        set { trimmed { $0.costLimit = max(0, newValue) } }
    }

    /// Seconds an entry lives after its last access (`.infinity`: forever); setting it trims at once.
    public var ageLimit: TimeInterval {
        get { lock.withLock { storage.pointee.ageLimit == .max ? .infinity : Double(storage.pointee.ageLimit) / 1e9 } }
        set { trimmed { $0.ageLimit = LRUStorage<Key, Value>.nanoseconds(newValue) } }
    }

    /// How many entries the cache holds (expired ones included until they are dropped).
    public var count: Int { lock.withLock { storage.pointee.index.count } }

    /// The total cost of the entries held.
    public var totalCost: Int { lock.withLock { storage.pointee.cost } }

    /// The value for `key`, which becomes the most recently used; nil when absent or expired.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        let now = MonotonicClock.now()
        var released: [Value] = []
        let value = lock.withLock { storage.pointee.value(forKey: key, now: now, released: &released) }
        _ = released  // dropped here, after the lock
        return value
    }

    /// Whether `key` has a live entry; does not count as an access.
    public func contains(_ key: Key) -> Bool {
        let now = MonotonicClock.now()
        return lock.withLock { storage.pointee.contains(key, now: now) }
    }

    /// Stores `value` for `key` as the most recently used entry, then trims to the limits.
    /// - Parameters:
    ///   - value: The value to keep.
    ///   - key: Its key; an entry already stored under it is replaced.
    ///   - cost: The entry's cost towards `costLimit` (0 by default).
    @inlinable
    public func setValue(_ value: Value, forKey key: Key, cost: Int = 0) {
        let now = MonotonicClock.now()
        var released: [Value] = []
        lock.withLock { storage.pointee.setValue(value, forKey: key, cost: cost, now: now, released: &released) }
        _ = released
    }

    /// Removes and returns the value for `key`.
    @inlinable @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        var released: [Value] = []
        lock.withLock {
            guard let slot = storage.pointee.index[key] else { return }
            storage.pointee.remove(slot, released: &released)
        }
        return released.first
    }

    /// Removes every entry.
    public func removeAll() {
        let old = lock.withLock { storage.pointee.removeAll() }
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
    public func trim(toAge seconds: TimeInterval) { trimmed(to: (.max, .max, LRUStorage<Key, Value>.nanoseconds(seconds))) }

    /// The keys from most to least recently used (for inspection and tests; O(n)).
    public var keysByRecency: [Key] { lock.withLock { storage.pointee.keysByRecency } }

    private func trimmed(_ change: (inout LRUStorage<Key, Value>) -> Void) {
        let now = MonotonicClock.now()
        var released: [Value] = []
        lock.withLock {
            change(&storage.pointee)
            storage.pointee.trim(now: now, released: &released)
        }
    }

    private func trimmed(to bounds: (count: Int, cost: Int, age: UInt64)) {
        let now = MonotonicClock.now()
        var released: [Value] = []
        lock.withLock { storage.pointee.trim(toCount: bounds.count, cost: bounds.cost, age: bounds.age, now: now, released: &released) }
    }
}
