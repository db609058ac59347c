#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
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

/// Monotonic time for access ages, read on every cache hit: the kernel's coarse clock (a few
/// milliseconds of resolution, plenty for ages in seconds) costs a fraction of a precise one.
@usableFromInline
enum MonotonicClock {
    /// Nanoseconds since an arbitrary point, never going backwards.
    @inlinable @inline(__always)
    static func now() -> UInt64 {
        #if canImport(Darwin)
        return clock_gettime_nsec_np(CLOCK_MONOTONIC_RAW_APPROX)
        #elseif os(Linux)
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
        #else
        return DispatchTime.now().uptimeNanoseconds
        #endif
    }
}
