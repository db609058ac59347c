import Foundation

/// One network call shared by identical requests (`RepeatStrategy.share`).
///
/// Members join until the call completes; then each member receives the whole response at once
/// (response, body, completion), so a member that joined late misses nothing. A member leaving
/// (cancel, timeout, owner released) detaches only itself; the call is cancelled when the last
/// member leaves. A closed flight accepts no members: the next identical request starts a new one.
/// Thread safety: safe to use from any thread.
final class Flight: Sendable {
    typealias Member = (core: RequestCore, mapError: @Sendable (URLError) -> TernError)

    private struct State {
        var members: [UInt64: Member] = [:]
        var task: (any TransportTask)?
        var response: HTTPURLResponse?
        var body = Data()
        var isClosed = false
    }

    let identity: RequestIdentity
    private let state = Locked(State())
    private let onClosed: @Sendable (Flight) -> Void

    init(identity: RequestIdentity, onClosed: @escaping @Sendable (Flight) -> Void) {
        self.identity = identity
        self.onClosed = onClosed
    }

    /// Adds a member; false when the flight has already closed.
    func join(_ core: RequestCore, mapError: @escaping @Sendable (URLError) -> TernError) -> Bool {
        state.withLock { state in
            guard !state.isClosed else { return false }
            state.members[core.id] = (core, mapError)
            return true
        }
    }

    /// Starts the network call. When the transport refuses (it was invalidated), the flight
    /// closes and returns its members so that the client can end each with `.clientInvalidated`.
    /// With `streaming`, members with a progress handler see the body's progress as it arrives.
    func start(_ request: URLRequest, on transport: any Transport, streaming: Bool) -> [RequestCore] {
        guard let task = transport.start(request, streaming: streaming, events: { [self] event in receive(event) }) else {
            let members = state.withLock { state -> [RequestCore] in
                state.isClosed = true
                defer { state.members = [:] }
                return state.members.values.map(\.core)
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

    /// Detaches one member; cancels the call when it was the last.
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
        case .response(let response):
            let watchers = state.withLock { state in
                state.response = response
                state.body = Data()
                return Self.progressWatchers(state)
            }
            watchers.forEach { $0.responseStarted(response) }
        case .data(let chunk):
            let watchers = state.withLock { state in
                if state.body.isEmpty { state.body = chunk } else { state.body.append(chunk) }
                return Self.progressWatchers(state)
            }
            watchers.forEach { $0.received(chunk.count) }
        case .sentBytes(let total, let expected):
            state.withLock { Self.progressWatchers($0) }.forEach { $0.sent(total, expected: expected) }
        case .completed(let error):
            let finished = state.withLock { state -> ([Member], HTTPURLResponse?, Data)? in
                guard !state.isClosed else { return nil }
                state.isClosed = true
                defer { state.members = [:]; state.task = nil; state.body = Data() }
                return (Array(state.members.values), state.response, state.body)
            }
            guard let (members, response, body) = finished else { return }
            onClosed(self)
            for member in members {
                if let response { member.core.receive(.response(response), mapError: member.mapError) }
                if !body.isEmpty { member.core.receive(.data(body), mapError: member.mapError) }
                member.core.receive(.completed(error), mapError: member.mapError)
            }
        }
    }
}

extension Flight {
    /// The progress reporters of the members still listening.
    private static func progressWatchers(_ state: State) -> [ProgressReporter] {
        state.isClosed ? [] : state.members.values.compactMap(\.core.progress)
    }
}

/// A member's place in a flight: cancelling it leaves the flight.
struct FlightMembership: TransportTask {
    let flight: Flight
    let id: UInt64
    func cancel() { flight.leave(id) }
}
