import Foundation

/// One WebSocket connection's opening, run as an ordinary call: the upgrade request goes through
/// the request's adapters, response rules, redirect policy, timeout, deadline, cancellation,
/// monitors, tracing and metrics like any request, and its exchange (this) opens the connection
/// and writes the upgrade instead of handing the request to the transport. A 101 leaves the
/// connection parked here until the socket takes it; any other answer is the call's response.
/// Thread safety: safe to use from any thread (one lock).
final class WebSocketUpgrade: ConnectionUpgrade {
    /// The handshake of the call's latest attempt: each attempt (a redirect, a restart after a
    /// refused upgrade) is a new connection with a fresh key (RFC 6455 §4.1).
    private let latest: Locked<WebSocketHandshake>
    /// The socket's monitors and span, which the call reports its attempts to.
    let observer: (any CallObserver)?
    private let options: WebSocketOptions
    private let settings: TransportSettings
    /// The connection a 101 left open, until the socket takes it or the call fails after all.
    private let parked = Locked<(any WebSocketDriver)?>(nil)

    init(options: WebSocketOptions, settings: TransportSettings, observer: (any CallObserver)?) {
        self.options = options
        self.settings = settings
        self.observer = observer
        latest = Locked(WebSocketHandshake(protocols: options.protocols, offersDeflate: options.compression == .permessageDeflate))
    }

    /// The serializer of the upgrade's response: the 101's checks (RFC 6455 §4.2.2) and what it agreed.
    var serializer: ResponseSerializer<WebSocketAgreement> {
        ResponseSerializer(acceptableContentTypes: nil, emptyValue: nil, kind: .builtIn) { [latest] _, head throws(TernError) in
            let handshake = latest.withLock { $0 }
            do throws(WebSocketHandshake.Refusal) {
                let subprotocol = try handshake.check(status: head.statusCode, headers: head.headerFields)
                return WebSocketAgreement(subprotocol: subprotocol, deflate: WebSocketHandshake.agreedDeflate(head.headerFields))
            } catch .invalid(let failure) {
                throw .webSocketHandshakeFailed(failure)
            } catch {
                throw .webSocketHandshakeFailed(.notUpgraded)  // not reached: validation lets only a 101 through
            }
        }
    }

    /// Hands `request` (an attempt of the call: its headers are the adapters') to `transport`,
    /// which opens its connection and reports the upgrade's answer to `events`.
    func start(
        _ request: TransportRequest, on transport: any Transport, events: @escaping @Sendable (TransportEvent) -> Void
    ) -> (any TransportTask)? {
        let handshake = WebSocketHandshake(protocols: options.protocols, offersDeflate: options.compression == .permessageDeflate)
        latest.withLock { $0 = handshake }
        let parked = self.parked
        let attempt = WebSocketAttempt(
            request: request.urlRequest, handshake: handshake, options: options, settings: settings, exchange: events,
            park: { driver in parked.withLock { $0 = driver } })
        guard let capable = transport as? any WebSocketTransport else {
            return attempt.fail(.unsupportedConfiguration("the client's transport (\(type(of: transport))) does not open WebSockets"))
        }
        return capable.openWebSocket(attempt)
    }

    /// A `URLError` that carries `error` to the call.
    static func urlError(_ error: TernError, code: URLError.Code = .badServerResponse) -> URLError {
        URLError(code, userInfo: [TransportRequest.failureKey: error, NSLocalizedDescriptionKey: error.localizedDescription])
    }

    /// The connection a 101 opened, once: the socket's from now on.
    func take() -> (any WebSocketDriver)? {
        parked.withLock { parked in
            defer { parked = nil }
            return parked
        }
    }

    /// The call failed after its 101 (a cancel came first): the parked connection closes.
    func discard(_ error: TernError) { take()?.abort(error) }
}

/// What a 101 agreed to: the subprotocol the server chose and the permessage-deflate parameters.
package struct WebSocketAgreement: Sendable {
    package let subprotocol: String?
    let deflate: WebSocketDeflate.Parameters?
}
