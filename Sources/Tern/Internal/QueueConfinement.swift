import Dispatch

extension DispatchQueue {
    /// Stops a debug build when the caller is not running on this queue: the check behind each
    /// type declared Sendable by hand because only its queue touches its mutable state, which
    /// the compiler cannot see. Release builds check nothing.
    @inline(__always)
    package func assertIsCurrent() {
        #if DEBUG
        dispatchPrecondition(condition: .onQueue(self))
        #endif
    }
}
