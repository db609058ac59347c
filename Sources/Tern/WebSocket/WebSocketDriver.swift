import Foundation

/// What a `WebSocket` runs on once its upgrade call answered 101: Tern's RFC 6455 over a
/// connection (`WebSocketConnection`), or a server in the same process (TernStubs'
/// `WebSocketPeer`).
/// Thread safety: its methods may be called from any thread.
package protocol WebSocketDriver: AnyObject, Sendable {
    /// The socket takes the connection its call's 101 opened, with what the 101 agreed to:
    /// events go to `events` from now on, starting with `.opened`. It reads once
    /// `setReadingPaused(false)` follows.
    func begin(_ agreement: WebSocketAgreement, events: @escaping @Sendable (WebSocketDriverEvent) -> Void)
    func send(_ message: WebSocketMessage, done: @escaping @Sendable (TernError?) -> Void)
    func ping(done: @escaping @Sendable (TernError?) -> Void)
    func close(_ code: WebSocketCloseCode, reason: String)
    /// Ends the socket at once with `error` (a cancel).
    func abort(_ error: TernError)
    func setReadingPaused(_ paused: Bool)
    /// The code of the close frame the client sent, if it sent one.
    var sentCloseCode: WebSocketCloseCode? { get }
}

/// What a socket's driver reports, in order, once each of `.opened` and `.ended`.
package enum WebSocketDriverEvent: Sendable {
    case opened(subprotocol: String?)
    case message(WebSocketMessage)
    /// The connection ended with `ending`; reconnection number `attempt` starts after `delay` s.
    case reconnecting(attempt: Int, after: TimeInterval, WebSocketEnding)
    case ended(WebSocketEnding)
}

extension WebSocketConnection: WebSocketDriver {}
