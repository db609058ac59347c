import Foundation

/// One exchange shared by the identical attempts of several calls (`RepeatStrategy.share`).
///
/// Attempts join until the exchange completes; then each receives the whole response at once
/// (head, body, completion), so an attempt that joined late misses nothing, and each call goes on
/// from there on its own (validates, decodes, follows a redirect — whose next attempt may join
/// another shared exchange). Members with a progress handler see progress live. A member leaving
/// (cancel, timeout, owner released) detaches only itself; the exchange is cancelled when the last
/// member leaves. A closed exchange accepts no members: the next identical attempt starts a new one.
/// Thread safety: safe to use from any thread.
final class SharedExchange: Sendable {
    /// One attempt taking part: its request's lifecycle, and where its events go.
    struct Member: Sendable {
        let core: RequestCore
        let receive: @Sendable (TransportEvent) -> Void
        var progress: ProgressReporter? { core.progress }
    }

    private struct State {
        var members: [UInt64: Member] = [:]
        var task: (any TransportTask)?
        var response: ResponseHead?
        var body = Data()
        var metrics: Metrics?
        var isClosed = false
    }

    let identity: RequestIdentity
    private let state = Locked(State())
    private let onClosed: @Sendable (SharedExchange) -> Void

    init(identity: RequestIdentity, onClosed: @escaping @Sendable (SharedExchange) -> Void) {
        self.identity = identity
        self.onClosed = onClosed
    }

    /// Adds the attempt of request `id`; false when the exchange has already closed.
    func join(_ attempt: Member, of id: UInt64) -> Bool {
        state.withLock { state in
            guard !state.isClosed else { return false }
            state.members[id] = attempt
            return true
        }
    }

    /// Starts the exchange through `start` (the client's one way to the transport). When the
    /// transport refuses (it was invalidated) the exchange closes and returns its members, for
    /// the client to end each one.
    func start(
        _ request: TransportRequest,
        through start: (TransportRequest, @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)?
    ) -> [Member] {
        guard let task = start(request, { [self] event in receive(event) }) else {
            let members = state.withLock { state -> [Member] in
                state.isClosed = true
                defer { state.members = [:] }
                return Array(state.members.values)
            }
            onClosed(self)
            return members
        }
        let cancelNow = state.withLock { state -> Bool in
            guard !state.isClosed else { return true }
            state.task = task
            return false
        }
        if cancelNow { task.cancel() }
        return []
    }

    /// Detaches the attempt of request `id`; cancels the exchange when it was the last.
    func leave(_ id: UInt64) {
        let task = state.withLock { state -> (any TransportTask)?? in
            guard state.members.removeValue(forKey: id) != nil, state.members.isEmpty, !state.isClosed else { return nil }
            state.isClosed = true
            defer { state.task = nil }
            return .some(state.task)
        }
        guard let task else { return }
        onClosed(self)
        task?.cancel()
    }

    private func receive(_ event: TransportEvent) {
        switch event {
        case .head(let response):
            started(response)
        case .data(let chunk):
            let watchers = state.withLock { state in
                if state.body.isEmpty { state.body = chunk } else { state.body.append(chunk) }
                return Self.signOfLife(state)
            }
            watchers.forEach { $0.received(chunk.count) }
        case .sentBytes(let total, let expected):
            state.withLock { Self.signOfLife($0) }.forEach { $0.sent(total, expected: expected) }
        case .receiving:
            _ = state.withLock { Self.signOfLife($0) }
        case .metrics(let metrics):
            state.withLock { $0.metrics = metrics }
        case .completed(let error):
            let finished = state.withLock { state -> ([Member], ResponseHead?, Data, Metrics?)? in
                guard !state.isClosed else { return nil }
                state.isClosed = true
                defer { state.members = [:]; state.task = nil; state.body = Data() }
                return (Array(state.members.values), state.response, state.body, state.metrics)
            }
            guard let (members, response, body, metrics) = finished else { return }
            onClosed(self)
            for member in members {
                // Replayed with progress: a member that joined late then still ends at the full count.
                if let response { member.receive(.head(response)) }
                if !body.isEmpty { member.receive(.data(body)) }
                if let metrics { member.receive(.metrics(metrics)) }
                member.receive(.completed(error))
            }
        }
    }

    /// A new response head: the body starts over.
    private func started(_ response: ResponseHead) {
        let watchers = state.withLock { state in
            state.response = response
            state.body = Data()
            return Self.signOfLife(state)
        }
        watchers.forEach { $0.responseStarted(response) }
    }

    /// A sign of life from the exchange: each member's idle timeout counts from now. Returns the
    /// progress reporters of the members still listening.
    private static func signOfLife(_ state: State) -> [ProgressReporter] {
        guard !state.isClosed else { return [] }
        for member in state.members.values { member.core.touch() }
        return state.members.values.compactMap(\.progress)
    }
}

/// An attempt's place in a shared exchange: cancelling it leaves the exchange.
struct SharedExchangeMembership: TransportTask {
    let exchange: SharedExchange
    let id: UInt64
    func cancel() { exchange.leave(id) }
}
