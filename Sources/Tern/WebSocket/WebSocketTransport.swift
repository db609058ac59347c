import Foundation

/// A transport that opens WebSocket connections: a capability a transport may adopt.
///
/// `CurlTransport` and `URLSessionTransport` open them over the network with Tern's RFC 6455
/// (on Apple platforms URLSession's stream tasks, from the transport's own session; on Linux
/// libcurl's connect-only connections), and TernStubs' `StubTransport` serves them in the
/// process. A client whose transport does not adopt it fails its sockets with
/// `TernError.unsupportedConfiguration`. A transport that wraps another forwards its sockets:
/// ```swift
/// func openWebSocket(_ attempt: WebSocketAttempt) -> (any TransportTask)? { wrapped.openWebSocket(attempt) }
/// ```
/// and one that answers sockets itself, without a network, serves them with TernStubs'
/// `attempt.serve(by: self)` (see its `WebSocketServing`).
public protocol WebSocketTransport: Transport {
    /// Opens the connection of one attempt of a socket's upgrade call and reports the
    /// handshake's answer as the attempt's exchange; nil once the transport is invalidated.
    func openWebSocket(_ attempt: WebSocketAttempt) -> (any TransportTask)?
}

/// One attempt of a WebSocket's upgrade call, as its transport gets it: the upgrade request (its
/// headers are the adapters'), the handshake it offers, and where its answer goes. A 101 leaves
/// the connection parked for the socket; any other answer is the call's response.
/// Thread safety: a value type, safe to share.
public struct WebSocketAttempt: Sendable {
    /// The upgrade request, as the call's stages left it.
    public let request: URLRequest
    let handshake: WebSocketHandshake
    let options: WebSocketOptions
    /// The client's transport settings: a connection's proxy, TLS and host overrides.
    let settings: TransportSettings
    /// The call's exchange: the answer's head, a refusal's body, the completion.
    package let exchange: @Sendable (TransportEvent) -> Void
    /// Keeps the connection a 101 opened until the socket takes it.
    package let park: @Sendable (any WebSocketDriver) -> Void

    /// The subprotocols the socket offers, in order of preference.
    package var offeredProtocols: [String] { handshake.protocols }
    /// The `Sec-WebSocket-Accept` a 101 must carry for this attempt's key.
    package var acceptKey: String { WebSocketHandshake.accept(for: handshake.key) }

    /// Runs Tern's RFC 6455 over a new connection: `makeStream` gives it the queue its events
    /// come on; the upgrade is written once it connects.
    func connect(over makeStream: (DispatchQueue) -> any WebSocketByteStream) -> any TransportTask {
        let queue = DispatchQueue(label: "Tern.WebSocket")
        let connection = WebSocketConnection(stream: makeStream(queue), queue: queue, handshake: handshake, options: options)
        connection.upgrade(request, exchange: exchange, park: park)
        return connection
    }

    /// Fails the attempt with `error`, after the transport's `openWebSocket` has returned.
    func fail(_ error: TernError) -> any TransportTask {
        let failure = WebSocketUpgrade.urlError(error)
        DispatchQueue.global().async { [exchange] in exchange(.completed(failure)) }
        return FailedUpgrade()
    }
}

/// An upgrade that could not start: it has already failed.
private struct FailedUpgrade: TransportTask {
    func cancel() {}
}
