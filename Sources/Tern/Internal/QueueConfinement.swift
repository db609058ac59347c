import Dispatch

extension DispatchQueue {
    /// Stops a debug build when the caller is not running on this queue: the check behind each
    /// `@unchecked Sendable` type whose mutable state only its queue touches, which the compiler
    /// cannot see. Release builds check nothing.
    @inline(__always)
    package func assertIsCurrent() {
        #if DEBUG
        dispatchPrecondition(condition: .onQueue(self))
        #endif
    }
}
