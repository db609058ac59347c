import Foundation

/// The client's one way to its transport: every attempt starts here, alone or, with an identity,
/// as a member of the open `SharedExchange` for identical requests (`RepeatStrategy.share`).
///
/// Either way the attempt gets a task to cancel and the same kind of event stream, so the exchange
/// stage has one path.
/// Thread safety: safe to use from any thread.
final class SharingTransport: Sendable {
    let transport: any Transport
    private let open = Locked([RequestIdentity: SharedExchange]())

    init(_ transport: any Transport) {
        self.transport = transport
    }

    /// Whether no shared exchange is open (for tests).
    var isIdle: Bool { open.withLock { $0.isEmpty } }

    /// Starts one exchange for request `id` and reports it to `events`: on the transport itself,
    /// or, when `identity` is given, by joining the open exchange for it (starting one when none
    /// is open). Nil when the transport has been invalidated.
    func start(
        _ request: TransportRequest, for id: UInt64, sharing identity: RequestIdentity?,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) -> (any TransportTask)? {
        if let upgrade = request.upgrade { return upgrade.start(request, on: transport, events: events) }
        guard let identity else { return transport.start(request, events: events) }
        let (exchange, leads) = open.withLock { open -> (SharedExchange, Bool) in
            if let exchange = open[identity], exchange.join(id, events: events) { return (exchange, false) }
            // None open, or the open one closed and has not left the table yet: a new one.
            let exchange = SharedExchange(identity: identity) { [weak self] in self?.close($0) }
            _ = exchange.join(id, events: events)
            open[identity] = exchange
            return (exchange, true)
        }
        if leads, !exchange.start(request, on: transport, leader: id) { return nil }
        return SharedExchangeMembership(exchange: exchange, id: id)
    }

    private func close(_ exchange: SharedExchange) {
        open.withLock { open in
            if open[exchange.identity] === exchange { open[exchange.identity] = nil }
        }
    }
}
