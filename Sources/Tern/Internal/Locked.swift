import Foundation

/// A value guarded by one `NSLock`; the only way to touch it is inside `withLock`. Visible to the
/// package's other modules (TernStubs) through `package` access, not to users.
///
/// `Synchronization.Mutex` would do, but needs iOS 18 / macOS 15; this wrapper keeps the
/// deployment targets of the package. Never call user code or resume a continuation inside
/// `withLock`: take what you need, return, then act.
package final class Locked<Value> {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    @inline(__always)
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}

// Sendable: `value` is only read or written while `lock` is held, and only Sendable values may
// cross threads through it.
extension Locked: @unchecked Sendable where Value: Sendable {}

/// A dispatch timer that can be stored in `Sendable` types.
// Sendable: dispatch sources are thread-safe; each owner sets the handler once before
// `resume()` and calls `schedule` only under its own lock.
struct SendableTimer: @unchecked Sendable {
    let source: any DispatchSourceTimer
}
