import Foundation

/// One exchange shared by the identical attempts of several calls (`RepeatStrategy.share`).
///
/// To its members it looks like a transport that hands the body over whole at the end: each
/// receives the head as it arrives, `.receiving` with the bytes so far while the body comes in
/// (their progress and idle timeouts run on it), then the body once, the metrics and the
/// completion. The body is kept once, however many members there are; each member's `Attempt`
/// takes it without copying. A member that joins late gets the head and the count so far with
/// the next event, so it misses nothing. Every member's events are sent from the transport's
/// event stream, one at a time, never under the lock.
///
/// A member leaving (cancel, timeout, owner released) detaches only itself; the exchange is
/// cancelled when the last member leaves. A closed exchange accepts no members: the next identical
/// attempt starts a new one.
/// Thread safety: safe to use from any thread.
final class SharedExchange: Sendable {
    typealias Events = @Sendable (TransportEvent) -> Void

    private struct Member {
        let receive: Events
        /// Whether it has seen the current head.
        var hasHead: Bool
    }

    private struct State {
        var members: [UInt64: Member] = [:]
        var task: (any TransportTask)?
        var head: ResponseHead?
        var body = Data()
        /// Bytes of the body received so far (a buffering transport may say more than `body` holds).
        var received: Int64 = 0
        var metrics: Metrics?
        var isClosed = false
    }

    /// Marks the failure of members whose exchange the transport refused to start.
    static let refusedKey = "TernSharedExchangeRefused"

    let identity: RequestIdentity
    private let state = Locked(State())
    private let onClosed: @Sendable (SharedExchange) -> Void

    init(identity: RequestIdentity, onClosed: @escaping @Sendable (SharedExchange) -> Void) {
        self.identity = identity
        self.onClosed = onClosed
    }

    /// Adds member `id`; false when the exchange has already closed.
    func join(_ id: UInt64, events: @escaping Events) -> Bool {
        state.withLock { state in
            guard !state.isClosed else { return false }
            state.members[id] = Member(receive: events, hasHead: false)
            return true
        }
    }

    /// Starts the exchange on `transport` for its first member, `leader`. False when the transport
    /// refuses (it was invalidated): the exchange closes, and every other member completes with
    /// the refusal (`refusedKey`), which its call reports as the leader's: `.clientInvalidated`.
    func start(_ request: TransportRequest, on transport: any Transport, leader: UInt64) -> Bool {
        guard let task = transport.start(request, events: { [self] event in receive(event) }) else {
            let others = state.withLock { state -> [Member] in
                state.isClosed = true
                defer { state.members = [:] }
                return state.members.filter { $0.key != leader }.map(\.value)
            }
            onClosed(self)
            for member in others { member.receive(.completed(URLError(.cancelled, userInfo: [Self.refusedKey: true]))) }
            return false
        }
        let cancelNow = state.withLock { state -> Bool in
            guard !state.isClosed else { return true }
            state.task = task
            return false
        }
        if cancelNow { task.cancel() }
        return true
    }

    /// Detaches member `id`; cancels the exchange when it was the last.
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

    /// Runs `body` once the underlying exchange has delivered what it received (at once when it
    /// has ended).
    func afterPendingEvents(_ body: @escaping @Sendable () -> Void) {
        guard let task = state.withLock({ $0.task }) else { return body() }
        task.afterPendingEvents(body)
    }

    /// One event of the exchange, passed on to the members in the shape described above.
    private func receive(_ event: TransportEvent) {
        switch event {
        case .head(let head):
            let members = state.withLock { state in
                state.head = head
                state.body = Data()
                state.received = 0
                return Self.takeMembers(&state, withHead: false)
            }
            members.forEach { $0.receive(.head(head)) }
        case .data(let chunk):
            let (members, head, received) = state.withLock { state in
                // Closed (every member left): the transport is being cancelled; keep nothing for nobody.
                guard !state.isClosed else { return ([Member](), state.head, state.received) }
                if state.body.isEmpty { state.body = chunk } else { state.body.append(chunk) }
                state.received += Int64(chunk.count)
                return (Self.takeMembers(&state), state.head, state.received)
            }
            Self.send(.receiving(received), to: members, head: head)
        case .receiving(let total):
            let (members, head, received) = state.withLock { state in
                state.received = max(state.received, total)
                return (Self.takeMembers(&state), state.head, state.received)
            }
            Self.send(.receiving(received), to: members, head: head)
        case .sentBytes:
            let (members, head) = state.withLock { state in (Self.takeMembers(&state), state.head) }
            Self.send(event, to: members, head: head)
        case .metrics(let metrics):
            state.withLock { $0.metrics = metrics }
        case .completed(let error):
            let finished = state.withLock { state -> ([Member], ResponseHead?, Data, Metrics?)? in
                guard !state.isClosed else { return nil }
                state.isClosed = true
                defer { state.members = [:]; state.task = nil; state.body = Data() }
                return (Array(state.members.values), state.head, state.body, state.metrics)
            }
            guard let (members, head, body, metrics) = finished else { return }
            onClosed(self)
            for member in members {
                if let head, !member.hasHead { member.receive(.head(head)) }
                if !body.isEmpty { member.receive(.data(body)) }
                if let metrics { member.receive(.metrics(metrics)) }
                member.receive(.completed(error))
            }
        }
    }

    /// The members still listening, as they were before this event (whether each had seen the
    /// head); from now on each has. `withHead: false` for a new head, which none has seen.
    private static func takeMembers(_ state: inout State, withHead: Bool = true) -> [Member] {
        guard !state.isClosed else { return [] }
        let members = state.members.values.map { Member(receive: $0.receive, hasHead: withHead && $0.hasHead) }
        for id in state.members.keys { state.members[id]?.hasHead = true }
        return members
    }

    /// Sends `event` to `members`, the head first to one that joined after it.
    private static func send(_ event: TransportEvent, to members: [Member], head: ResponseHead?) {
        for member in members {
            if let head, !member.hasHead { member.receive(.head(head)) }
            member.receive(event)
        }
    }
}

/// An attempt's place in a shared exchange: cancelling it leaves the exchange.
struct SharedExchangeMembership: TransportTask {
    let exchange: SharedExchange
    let id: UInt64
    func cancel() { exchange.leave(id) }
    func afterPendingEvents(_ body: @escaping @Sendable () -> Void) { exchange.afterPendingEvents(body) }
}
