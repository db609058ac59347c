import Foundation

/// A connection a WebSocket reads and writes itself: TCP, TLS for `wss`, through the client's
/// proxy, with the client's TLS settings. A `WebSocketTransport` opens one for each attempt.
/// Thread safety: `write` is called on the queue it was made with (the WebSocket's), its other
/// methods from any thread; its events come one at a time, in order, on that queue. Package-visible for tern-bench's TCP
/// floor, which echoes plain bytes over the same stream.
package protocol WebSocketByteStream: AnyObject, Sendable {
    /// Connects, then reports: `.opened`, `.received` as bytes arrive, and `.ended` once.
    func open(events: @escaping @Sendable (WebSocketStreamEvent) -> Void)
    /// Writes `bytes` after what was written before; `written` runs once they are all handed to
    /// the connection (or with the error that stopped them). Called on the stream's queue, where
    /// the WebSocket's protocol runs: the write starts there and then, without another hop.
    func write(_ bytes: Data, written: @escaping @Sendable (URLError?) -> Void)
    /// Stops (or resumes) reading: a consumer that does not keep up holds the connection back.
    /// A pause asked on the stream's queue (from an event) applies before the next read.
    func setReadingPaused(_ paused: Bool)
    /// Writes what is pending, then shuts the connection down for writing (TCP's FIN) while
    /// reading goes on: a graceful close, after which the peer's last bytes are read, not reset.
    /// Called on the stream's queue.
    func finishWriting()
    /// Closes the connection; no event follows but `.ended`, if it has not come yet. `released`
    /// runs on the stream's queue once the connection's resources are freed (at once if they
    /// already are): the socket reports its end only then, so that a process may exit the moment
    /// a socket has ended, with no TLS state being torn down behind it.
    func close(released: @escaping @Sendable () -> Void)
}

/// What a byte stream reports.
package enum WebSocketStreamEvent: Sendable {
    /// Connected (and, for `wss`, the TLS handshake done): the upgrade request can be written.
    case opened
    /// Bytes from the server.
    case received(Data)
    /// The connection ended: the server closed it (nil), or it failed.
    case ended(URLError?)
}
