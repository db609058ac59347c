#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// A value guarded by one lock; the only way to touch it is inside `withLock`. Visible to the
/// package's other modules (TernStubs) through `package` access, not to users.
///
/// Copies share the value and its lock (the storage is one object). The value and the lock live
/// in that one allocation: `NSLock` would add two more on Linux (the object and its
/// `pthread_mutex_t`), and every request holds several of these.
///
/// `Synchronization.Mutex` would do, but needs iOS 18 / macOS 15; this wrapper keeps the
/// deployment targets of the package. Never call user code or resume a continuation inside
/// `withLock`: take what you need, return, then act.
package struct Locked<Value> {
    private let storage: LockedStorage<Value>

    package init(_ value: Value) {
        storage = LockedStorage.make(value)
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    @inline(__always)
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try storage.withUnsafeMutablePointers { value, lock in
            PlatformLock.lock(lock)
            defer { PlatformLock.unlock(lock) }
            return try body(&value.pointee)
        }
    }
}

// Sendable: `value` is only read or written while the lock is held, and only Sendable values may
// cross threads through it.
extension Locked: @unchecked Sendable where Value: Sendable {}

/// The value (the buffer's header) and its lock (its one element), in one allocation.
private final class LockedStorage<Value>: ManagedBuffer<Value, PlatformLock.Primitive> {
    static func make(_ value: Value) -> LockedStorage {
        let buffer = create(minimumCapacity: 1) { _ in value }
        buffer.withUnsafeMutablePointerToElements { PlatformLock.initialize($0) }
        // `create` returns an instance of the class it is called on.
        return unsafeDowncast(buffer, to: LockedStorage.self)
    }

    deinit {
        withUnsafeMutablePointerToElements { PlatformLock.destroy($0) }
    }
}

/// The operating system's lock, the one platform difference `Locked` has.
private enum PlatformLock {
    #if canImport(Darwin)
    typealias Primitive = os_unfair_lock

    static func initialize(_ lock: UnsafeMutablePointer<Primitive>) { lock.initialize(to: os_unfair_lock()) }
    static func destroy(_ lock: UnsafeMutablePointer<Primitive>) { lock.deinitialize(count: 1) }
    static func lock(_ lock: UnsafeMutablePointer<Primitive>) { os_unfair_lock_lock(lock) }
    static func unlock(_ lock: UnsafeMutablePointer<Primitive>) { os_unfair_lock_unlock(lock) }
    #else
    typealias Primitive = pthread_mutex_t

    static func initialize(_ lock: UnsafeMutablePointer<Primitive>) {
        lock.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(lock, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    static func destroy(_ lock: UnsafeMutablePointer<Primitive>) {
        pthread_mutex_destroy(lock)
        lock.deinitialize(count: 1)
    }

    static func lock(_ lock: UnsafeMutablePointer<Primitive>) { pthread_mutex_lock(lock) }
    static func unlock(_ lock: UnsafeMutablePointer<Primitive>) { pthread_mutex_unlock(lock) }
    #endif
}

/// A dispatch timer that can be stored in `Sendable` types.
// Sendable: dispatch sources are thread-safe; each owner sets the handler once before
// `resume()` and calls `schedule` only under its own lock.
struct SendableTimer: @unchecked Sendable {
    let source: any DispatchSourceTimer
}
