import Foundation

/// A WebSocket opened by a `Client` (`Client.webSocket(_:options:)`): send messages, read them as
/// an `AsyncSequence`, ping, close. To Tern it is a request: its URL is built like a request's
/// (base URL, API group, query, headers, parameter and URL hooks, adapters), it is registered
/// with the client (`cancel(tag:)`, `cancel(url:)`, `cancelAll()` and an owner's release end it),
/// and it ends exactly once (`ending`, `ended()`), closed with a code or failed with a `TernError`.
/// Thread safety: safe to use from any thread.
public final class WebSocket: Sendable {
    /// The socket as a request: its id, URL, tags and phase, and `cancel()`.
    public let handle: RequestHandle
    private let inbox: BackpressureQueue<WebSocketMessage>
    private let connection: ReconnectingDriver?
    private let state: Locked<State>
    /// Told of each message sent, when the client has monitors.
    private let monitor: WebSocketMonitor?

    struct State {
        var subprotocol: String?
        var isOpen = false
        var ending: WebSocketEnding?
        var endWaiters: [CheckedContinuation<WebSocketEnding, Never>] = []
        var openWaiters: [CheckedContinuation<Result<String?, TernError>, Never>] = []
        var openings: [AsyncStream<String?>.Continuation] = []
    }

    /// Where completions of the closure-style `send` run.
    private let callbackQueue: CallbackQueue

    init(
        handle: RequestHandle, inbox: BackpressureQueue<WebSocketMessage>, connection: ReconnectingDriver?, state: Locked<State>,
        callbackQueue: CallbackQueue = .main, monitor: WebSocketMonitor? = nil
    ) {
        self.handle = handle
        self.monitor = monitor
        self.callbackQueue = callbackQueue
        self.inbox = inbox
        self.connection = connection
        self.state = state
    }

    /// The messages the server sends, in order; the sequence finishes when the socket closes and
    /// throws the `TernError` it failed with. One reader at a time; a reader that falls behind
    /// holds the connection back (`WebSocketOptions.receiveBufferSize`).
    public var messages: WebSocketMessages { WebSocketMessages(inbox: inbox) }

    /// The subprotocol the server chose, once open; nil before, or when it chose none.
    public var subprotocol: String? { state.withLock { $0.subprotocol } }

    /// How the socket ended; nil while it is connecting or open.
    public var ending: WebSocketEnding? { state.withLock { $0.ending } }

    /// The code of the close frame Tern sent on the last connection — the app's `close`, the
    /// answer to the server's close, or the violation Tern closed it for (1002, 1007, 1009) —
    /// nil when it sent none. Beside `ending`, it tells a finished close handshake from one side.
    public var sentCloseCode: WebSocketCloseCode? { connection?.sentCloseCode }

    /// Waits until the socket is open; returns the subprotocol the server chose.
    /// - Throws: the `TernError` it failed with before opening (a refused handshake, say).
    @discardableResult
    public func opened() async throws(TernError) -> String? {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<String?, TernError>, Never>) in
            let now: Result<String?, TernError>? = state.withLock { state in
                if state.isOpen { return .success(state.subprotocol) }
                if let ending = state.ending { return .failure(Self.error(of: ending)) }
                state.openWaiters.append(continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
        return try result.get()
    }

    /// Each time the socket opens — now, if it is open, then after each reconnection — the
    /// subprotocol the server chose; finishes when the socket ends. Resubscribe here:
    ///
    /// ```swift
    /// for await _ in socket.openings() { try? await socket.send("subscribe CNY") }
    /// ```
    public func openings() -> AsyncStream<String?> {
        let (stream, continuation) = AsyncStream<String?>.makeStream(bufferingPolicy: .unbounded)
        let now = state.withLock { state -> (isOpen: Bool, subprotocol: String?, hasEnded: Bool) in
            if state.ending == nil { state.openings.append(continuation) }
            return (state.isOpen, state.subprotocol, state.ending != nil)
        }
        if now.isOpen { continuation.yield(now.subprotocol) }
        if now.hasEnded { continuation.finish() }
        return stream
    }

    /// Waits for the socket's end. By then its connection is closed and freed (TLS state
    /// included), so a command-line tool may exit as soon as this returns.
    public func ended() async -> WebSocketEnding {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> WebSocketEnding? in
                if let ending = state.ending { return ending }
                state.endWaiters.append(continuation)
                return nil
            }
            if let now { continuation.resume(returning: now) }
        }
    }

    /// Sends `message`: returns at once while the send buffer has room
    /// (`WebSocketOptions.sendBufferSize`), else once the message is written; sent before the
    /// socket opens, it waits for the handshake. A write that fails after `send` returned ends
    /// the socket with its error.
    /// - Throws: the `TernError` that stopped it: the socket closed or failed first.
    public func send(_ message: WebSocketMessage) async throws(TernError) {
        guard let connection else { throw Self.error(of: ending ?? .failed(.clientInvalidated)) }
        let error = await withCheckedContinuation { continuation in
            connection.send(message) { continuation.resume(returning: $0) }
        }
        if let error { throw error }
        monitor?.sent(message)
    }

    /// Sends `message`, then calls `completion` on the callback queue the socket was opened with:
    /// nil once the message is taken (at once while the send buffer has room, else once it is
    /// written), or the error that stopped it. Send the next message from the completion to let
    /// a slow network hold a fast sender back.
    public func send(_ message: WebSocketMessage, completion: @escaping @Sendable (TernError?) -> Void) {
        guard let connection else {
            return callbackQueue.perform { completion(Self.error(of: self.ending ?? .failed(.clientInvalidated))) }
        }
        let (queue, monitor) = (callbackQueue, self.monitor)
        connection.send(message) { error in
            if error == nil { monitor?.sent(message) }
            queue.perform { completion(error) }
        }
    }

    /// Sends a text message, then calls `completion` on the callback queue.
    public func send(_ text: String, completion: @escaping @Sendable (TernError?) -> Void) {
        send(.text(text), completion: completion)
    }

    /// Sends a text message.
    public func send(_ text: String) async throws(TernError) { try await send(.text(text)) }

    /// Sends a binary message.
    public func send(_ data: Data) async throws(TernError) { try await send(.data(data)) }

    /// Pings the server and waits for its pong.
    /// - Throws: `.timedOut` when no pong came within `WebSocketOptions.pongTimeout` (the socket
    ///   fails with it too), or why the socket ended first.
    public func ping() async throws(TernError) {
        guard let connection else { throw Self.error(of: ending ?? .failed(.clientInvalidated)) }
        let error = await withCheckedContinuation { continuation in
            connection.ping { continuation.resume(returning: $0) }
        }
        if let error { throw error }
    }

    /// Starts closing the socket with `code` and `reason` (at most 123 bytes are sent) and returns
    /// at once; `ended()` waits for the end. It ends as `.closed` with the code and reason of the
    /// close frame the server answers with; as `.failed(.timedOut)` when none comes within
    /// `WebSocketOptions.closeTimeout`, `.failed(.webSocketFailed(.abnormalClosure))` when the
    /// connection drops first, and `.failed(.cancelled(.explicit))` when it was not open yet.
    public func close(_ code: WebSocketCloseCode = .normalClosure, reason: String = "") {
        connection?.close(code, reason: reason)
    }

    /// Cancels the socket: it ends at once with `TernError.cancelled(.explicit)`.
    public func cancel() { handle.cancel() }

    static func error(of ending: WebSocketEnding) -> TernError {
        switch ending {
        case .failed(let error): error
        case .closed(let code, _): .webSocketFailed(code: code, reason: "the WebSocket is closed")
        }
    }
}

/// A `WebSocket`'s messages as they arrive.
public struct WebSocketMessages: AsyncSequence, Sendable {
    public typealias Element = WebSocketMessage
    let inbox: BackpressureQueue<WebSocketMessage>

    /// Reads the next message.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let inbox: BackpressureQueue<WebSocketMessage>

        /// The next message; nil once the socket closed.
        /// - Throws: the `TernError` the socket failed with (once: the next call returns nil), or
        ///   `CancellationError` when the reading task is cancelled (the socket runs on).
        public mutating func next() async throws -> WebSocketMessage? { try await inbox.next() }
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(inbox: inbox) }
}
