import Foundation

/// The client's one way to its transport: every attempt, alone or shared, starts here, so what
/// comes to sit around an exchange (monitors, limits) is written once.
extension Client {
    /// Starts one exchange on the transport; nil when the transport has been invalidated.
    func startExchange(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
        transport.start(request, events: events)
    }

    /// Joins `attempt` (of request `id`, sending `request`) to the open shared exchange for
    /// `identity`, starting one with `request` when none is open. Nil when the exchange closed
    /// between lookup and join: the attempt then goes alone.
    func join(
        _ attempt: SharedExchange.Member, sending request: TransportRequest, of id: UInt64,
        sharing identity: RequestIdentity
    ) -> SharedExchangeMembership? {
        let (exchange, leads) = registry.withLock { registry -> (SharedExchange, Bool) in
            if let open = registry.sharedExchanges[identity] { return (open, false) }
            let exchange = SharedExchange(identity: identity) { [weak self] in self?.close($0) }
            registry.sharedExchanges[identity] = exchange
            return (exchange, true)
        }
        guard exchange.join(attempt, of: id) else { return nil }
        if leads {
            for refused in exchange.start(request, through: startExchange) {
                // The transport was invalidated: end each member as a lone request would end.
                refused.core.fail(.clientInvalidated)
            }
        }
        return SharedExchangeMembership(exchange: exchange, id: id)
    }

    private func close(_ exchange: SharedExchange) {
        registry.withLock { registry in
            if registry.sharedExchanges[exchange.identity] === exchange { registry.sharedExchanges[exchange.identity] = nil }
        }
    }
}
