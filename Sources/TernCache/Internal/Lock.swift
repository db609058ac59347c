import Foundation

/// A mutual-exclusion lock for TernCache's own types (TernCache depends on nothing, so it keeps
/// its own). `NSLock` is a pthread mutex underneath on every platform; this wrapper exists so that
/// the hot paths can be `@inlinable` without exposing more than a lock.
/// Thread safety: safe to use from any thread.
// Sendable: NSLock is thread-safe, and the reference to it never changes.
@usableFromInline
final class Lock: @unchecked Sendable {
    @usableFromInline let lock = NSLock()

    @usableFromInline init() {}

    /// Runs `body` while holding the lock.
    @inlinable @inline(__always)
    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body()
    }
}

/// Monotonic time for access ages: cheap enough to read on every cache hit.
@usableFromInline
enum MonotonicClock {
    /// Nanoseconds since an arbitrary point, never going backwards.
    @inlinable @inline(__always)
    static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }
}
