import Foundation

/// Opens a socket's connections, one per call: its turn at the host's gate (RFC 6455 §4.1: one
/// connecting socket per host), then the upgrade as an ordinary call of the client's
/// (`WebSocketUpgrade`), whose clocks start with the turn; the turn ends with the call.
/// Thread safety: a value type, safe to share.
struct WebSocketOpener: Sendable {
    /// What one opening gives: the connection and what its 101 agreed to, or why there is none.
    typealias Outcome = Result<(driver: any WebSocketDriver, agreement: WebSocketAgreement), TernError>

    /// Held, as a request in flight holds it: a socket keeps its client while it lives.
    let client: Client
    /// The upgrade request, built once (its adapters run for each connection).
    let request: Request<WebSocketAgreement>
    let options: WebSocketOptions
    let gateKey: String
    let observer: (any CallObserver)?

    /// Opens one connection; `done` runs once with its outcome, unless the returned opening is
    /// cancelled first.
    func open(done: @escaping @Sendable (Outcome) -> Void) -> WebSocketOpening {
        let opening = WebSocketOpening()
        let (client, request, options, observer) = (client, request, options, observer)
        opening.ticket(
            WebSocketConnectGate.shared.enter(gateKey) {
                guard !opening.isCancelled else { return opening.ended() }  // the socket has ended meanwhile
                let upgrade = WebSocketUpgrade(options: options, settings: client.configuration.transportSettings, observer: observer)
                var call = request
                call.serializer = upgrade.serializer
                call.editExtras { $0.upgrade = upgrade }
                let handle = client.perform(call, queue: .immediate, alwaysReport: true) { _, result in
                    opening.ended()
                    switch result {
                    case .success(let response):
                        guard let driver = upgrade.take() else { return done(.failure(.cancelled(.explicit))) }
                        done(.success((driver, response.value)))
                    case .failure(let error):
                        upgrade.discard(error)
                        // The socket's attempts are its connections: a restarted upgrade ends with its last error.
                        if case .failedAfterRetries(_, let last) = error { return done(.failure(last)) }
                        done(.failure(error))
                    }
                }
                opening.started(handle)
            })
        return opening
    }
}

/// One connection being opened: its place at the host's gate, then its call.
/// Thread safety: safe to use from any thread (one lock).
final class WebSocketOpening: Sendable {
    private struct State {
        var ticket: WebSocketConnectGate.Ticket?
        var handle: RequestHandle?
        var isCancelled = false
        var hasEnded = false
    }

    private let state = Locked(State())

    var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// Stops the opening: the call is cancelled, or the place in the line given up.
    func cancel() {
        let handle = state.withLock { state -> RequestHandle? in
            state.isCancelled = true
            return state.handle
        }
        handle?.cancel()
        ended()
    }

    fileprivate func ticket(_ ticket: WebSocketConnectGate.Ticket) {
        let leaves = state.withLock { state -> Bool in
            state.ticket = ticket
            return state.hasEnded
        }
        if leaves { WebSocketConnectGate.shared.leave(ticket) }
    }

    fileprivate func started(_ handle: RequestHandle) {
        let cancels = state.withLock { state -> Bool in
            // Kept only while the call runs: the call's completion holds this opening.
            if !state.hasEnded { state.handle = handle }
            return state.isCancelled
        }
        if cancels { handle.cancel() }
    }

    /// The call ended (or never started): the next socket to the host may connect, and the
    /// call is let go.
    fileprivate func ended() {
        let ticket = state.withLock { state -> WebSocketConnectGate.Ticket? in
            state.hasEnded = true
            state.handle = nil
            defer { state.ticket = nil }
            return state.ticket
        }
        if let ticket { WebSocketConnectGate.shared.leave(ticket) }
    }
}
