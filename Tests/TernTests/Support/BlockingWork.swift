import Foundation

/// Runs `work`, which blocks (waiting for a child process, a pipe, a file to grow), on a thread
/// of its own and returns its result.
///
/// Never on Dispatch's global queues: on Linux Swift's tasks run on those queues' few threads
/// (one per core here), and so do URLSession's delegate callbacks; a wait of seconds there holds
/// back every async test and every URLSession response of the suite meanwhile (a streamed
/// response's deadline then fires between chunks that were sent on time).
func onThreadOfItsOwn<Value: Sendable>(_ work: @escaping @Sendable () -> Value) async -> Value {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread { continuation.resume(returning: work()) }
    }
}

/// `onThreadOfItsOwn` for work that throws.
func onThreadOfItsOwn<Value: Sendable>(_ work: @escaping @Sendable () throws -> Value) async throws -> Value {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread { continuation.resume(with: Result { try work() }) }
    }
}

/// Waits (polling every 10 ms, without blocking a thread) until `condition` holds or `seconds`
/// pass; returns whether it held. For outcomes that arrive on their own schedule: assert the
/// outcome, not how soon a loaded machine produced it.
func eventually(within seconds: Double = 10, _ condition: @Sendable () -> Bool) async -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while !condition() {
        guard Date() < deadline else { return false }
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
    return true
}
