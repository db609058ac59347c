import Foundation

/// Elements between a producer that cannot wait (a transport's thread, a socket's queue) and one
/// `await` reader: past `limit` units waiting (`size` of each) the producer is asked to hold back
/// (`holdBack(true)`) until the reader has taken half of them (`holdBack(false)`). After the last
/// element the reader gets the end: nil, or the producer's error, thrown once (then nil).
/// Thread safety: safe to use from any thread (one lock); `holdBack` and continuations run outside it.
final class BackpressureQueue<Element: Sendable>: Sendable {
    private struct State {
        var items: [Element] = []
        var head = 0
        var units = 0
        var isHoldingBack = false
        var end: Result<Void, any Error>?
        var waiter: CheckedContinuation<Element?, any Error>?
    }

    private let state = Locked(State())
    private let limit: Int
    private let size: @Sendable (Element) -> Int
    private let holdBack: @Sendable (Bool) -> Void

    init(limit: Int, size: @escaping @Sendable (Element) -> Int, holdBack: @escaping @Sendable (Bool) -> Void) {
        self.limit = max(1, limit)
        self.size = size
        self.holdBack = holdBack
    }

    /// Units waiting for the reader.
    var buffered: Int { state.withLock { $0.units } }

    /// An element arrived: to the waiting reader, or kept. Returns the units now waiting.
    @discardableResult
    func append(_ element: Element) -> Int {
        let (waiter, holds, units) = state.withLock { state -> (CheckedContinuation<Element?, any Error>?, Bool, Int) in
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, false, state.units)
            }
            state.items.append(element)
            state.units += size(element)
            guard state.units > limit, !state.isHoldingBack else { return (nil, false, state.units) }
            state.isHoldingBack = true
            return (nil, true, state.units)
        }
        waiter?.resume(returning: element)
        if holds { holdBack(true) }
        return units
    }

    /// The producer ended (the first end counts): the reader gets it after the elements waiting.
    func finish(_ end: Result<Void, any Error>) {
        let waiter = state.withLock { state -> CheckedContinuation<Element?, any Error>? in
            guard state.end == nil else { return nil }
            state.end = end
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            state.end = .success(())  // an error is thrown once
            return waiter
        }
        switch end {
        case .success: waiter?.resume(returning: nil)
        case .failure(let error): waiter?.resume(throwing: error)
        }
    }

    /// The next element, waiting for one; nil at the end, or the producer's error. When the
    /// reading task is cancelled while it waits, `onCancel` runs (a request that ends the
    /// producer, whose end then comes here); without one the wait stops with `CancellationError`
    /// and the producer goes on.
    func next(onCancel: (@Sendable () -> Void)? = nil) async throws -> Element? {
        if let ready = try take() { return ready }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Element?, any Error>) in
                let (now, resumes) = state.withLock { state -> (Result<Element?, any Error>?, Bool) in
                    if let taken = take(&state) { return (taken, resumesProducer(&state)) }
                    // Checked under the lock: a cancel that came before the waiter was kept found none.
                    if onCancel == nil, Task.isCancelled { return (.failure(CancellationError()), false) }
                    state.waiter = continuation
                    return (nil, false)
                }
                if resumes { holdBack(false) }
                if let now { continuation.resume(with: now) }
            }
        } onCancel: {
            if let onCancel { return onCancel() }
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    /// An element or the end (`.some(nil)`), if either is there, without waiting.
    private func take() throws -> Element?? {
        let (taken, resumes) = state.withLock { state in (take(&state), resumesProducer(&state)) }
        if resumes { holdBack(false) }
        guard let taken else { return .none }
        return .some(try taken.get())
    }

    /// Whether the producer, held back, may go on: the reader has taken half of what waited.
    private func resumesProducer(_ state: inout State) -> Bool {
        guard state.isHoldingBack, state.units <= limit / 2 else { return false }
        state.isHoldingBack = false
        return true
    }

    private func take(_ state: inout State) -> Result<Element?, any Error>? {
        if state.head < state.items.count {
            let element = state.items[state.head]
            state.head += 1
            state.units -= size(element)
            if state.head == state.items.count {
                state.items.removeAll(keepingCapacity: true)
                state.head = 0
            }
            return .success(element)
        }
        switch state.end {
        case .success?: return .success(nil)
        case .failure(let error)?:
            state.end = .success(())  // thrown once; the next call ends the sequence
            return .failure(error)
        case nil: return nil
        }
    }
}
