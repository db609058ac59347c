import Foundation

/// Whether and when a WebSocket that ended connects again (`WebSocketOptions.reconnect`).
///
/// A socket reconnects after an ending a new connection may cure: the network dropped
/// (`.transport`), the connection ended without a close frame (1006), a pong or the opening
/// timed out (`.timedOut`), the server answered the handshake with a 5xx or 429, or closed with
/// 1001 (going away: a restart, a deploy), 1012 (service restart), 1013 (try again later) or 1014
/// (bad gateway). It never reconnects after the app closed or cancelled it, a passed `deadline`,
/// 1000 from the server, any other close code (1002, 1003, 1007–1011 and the application's own
/// 3000–4999: the server meant it), a refused handshake (4xx, a broken 101) or a protocol
/// violation Tern closed it for. Waits grow exponentially from `baseDelay` to `maxDelay`, with
/// `jitter`; after `maxAttempts` reconnections in a row the socket ends with the last ending. A
/// connection that stayed open for `stableAfter` seconds starts the count again (one the server
/// closes at once does not).
/// Thread safety: a value type, safe to share.
public struct WebSocketReconnectPolicy: Sendable, Equatable {
    /// Reconnections in a row before the socket gives up; 0 never reconnects.
    public var maxAttempts: Int
    /// Seconds before the first reconnection. Default 0.5.
    public var baseDelay: TimeInterval
    /// The longest wait, in seconds. Default 30.
    public var maxDelay: TimeInterval
    /// A random share of each wait added or taken off (0.2: ±20 %). Default 0.2.
    public var jitter: Double
    /// Seconds a connection must stay open for the count of reconnections to start again. Default 10.
    public var stableAfter: TimeInterval

    /// Creates a policy; every default is listed on its property.
    public init(
        maxAttempts: Int, baseDelay: TimeInterval = 0.5, maxDelay: TimeInterval = 30, jitter: Double = 0.2, stableAfter: TimeInterval = 10
    ) {
        self.maxAttempts = maxAttempts
        self.stableAfter = stableAfter
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.jitter = jitter
    }

    /// Never reconnect: the default.
    public static let never = WebSocketReconnectPolicy(maxAttempts: 0)

    /// Reconnect up to `maxAttempts` times in a row, waiting 0.5 s, 1 s, 2 s … up to 30 s.
    public static func exponential(maxAttempts: Int = 10) -> WebSocketReconnectPolicy {
        WebSocketReconnectPolicy(maxAttempts: maxAttempts)
    }

    /// The wait before reconnection number `attempt` (1 for the first) after `ending`, or nil
    /// for none.
    func delay(after ending: WebSocketEnding, attempt: Int) -> TimeInterval? {
        guard attempt <= maxAttempts, Self.mayCure(ending) else { return nil }
        return Backoff(base: baseDelay, maximum: maxDelay, jitter: jitter).delay(attempt: attempt)
    }

    private static func mayCure(_ ending: WebSocketEnding) -> Bool {
        switch ending {
        case .closed(let code, _):
            return [1001, 1012, 1013, 1014].contains(code.rawValue)
        case .failed(.transport), .failed(.timedOut), .failed(.webSocketFailed(.abnormalClosure, _)):
            return true
        case .failed(.unacceptableStatus(let status, _, _, _)):
            return status >= 500 || status == 429
        case .failed:
            return false
        }
    }
}

/// A socket's connections, one after another: each opened by its upgrade call
/// (`WebSocketOpener`), again under a `WebSocketReconnectPolicy` after an ending it may cure,
/// seen by its `WebSocket` as one socket — the same messages sequence, `.opened` after each
/// reconnection, `.reconnecting` before it, and one `.ended`. Messages sent while no connection
/// is open wait for the next one. An open connection's messages pass straight through, both
/// ways: a send goes to it from the caller's thread, and what it receives goes to the socket
/// from its own queue, with no hop through this one.
/// Thread safety: the routing of sends (`outbound`) and the connection whose events pass
/// (`live`) are locked; every other mutable property is touched only on `queue`.
// Sendable: see "Thread safety".
// Debug builds check the confinement (`queue.assertIsCurrent()`).
final class ReconnectingDriver: @unchecked Sendable {
    /// Where a message sent now goes.
    private struct Outbound {
        /// The open connection, once the messages that waited for it have gone to it.
        var direct: (any WebSocketDriver)?
        var waiting: [(message: WebSocketMessage, done: @Sendable (TernError?) -> Void)] = []
        /// Why the socket takes no more messages, once it has ended.
        var refusal: TernError?
    }

    private let queue = DispatchQueue(label: "Tern.WebSocketSocket")
    private let policy: WebSocketReconnectPolicy
    /// Kept while the socket may connect again.
    private var opener: WebSocketOpener?
    private let events: @Sendable (WebSocketDriverEvent) -> Void
    private let outbound = Locked(Outbound())
    /// The number of the connection whose events reach the socket.
    private let live = Locked(0)
    private var current: (any WebSocketDriver)?
    private var opening: WebSocketOpening?
    private var generation = 0
    private var failures = 0
    /// When the current connection opened.
    private var openedAt: DispatchTime?
    /// The app closed or cancelled it, or it ended: no reconnection.
    private var isStopped = false
    private var isPaused = false
    /// The close code the last connection wrote, read from any thread.
    private let lastSentClose = Locked<WebSocketCloseCode?>(nil)

    /// The code of the close frame the client sent, if it sent one.
    var sentCloseCode: WebSocketCloseCode? { lastSentClose.withLock { $0 } }

    init(policy: WebSocketReconnectPolicy, opener: WebSocketOpener, events: @escaping @Sendable (WebSocketDriverEvent) -> Void) {
        self.policy = policy
        self.opener = opener
        self.events = events
    }

    /// Opens the first connection.
    func start() { queue.async { [self] in connect() } }

    func send(_ message: WebSocketMessage, done: @escaping @Sendable (TernError?) -> Void) {
        let route = outbound.withLock { outbound -> Result<(any WebSocketDriver)?, TernError> in
            if let direct = outbound.direct { return .success(direct) }
            if let refusal = outbound.refusal { return .failure(refusal) }
            outbound.waiting.append((message, done))  // sent by the next connection
            return .success(nil)
        }
        switch route {
        case .success(let connection?): connection.send(message, done: done)
        case .success(nil): break
        case .failure(let refusal): done(refusal)
        }
    }

    func ping(done: @escaping @Sendable (TernError?) -> Void) {
        queue.async { [self] in
            guard let current else { return done(.webSocketFailed(code: .abnormalClosure, reason: "the WebSocket is not open")) }
            current.ping(done: done)
        }
    }

    func close(_ code: WebSocketCloseCode, reason: String) {
        refuseSends(.webSocketFailed(code: .normalClosure, reason: "the WebSocket is closed"))
        queue.async { [self] in
            guard !isStopped else { return }
            isStopped = true
            // Before a connection is open nothing is there to close: the socket ends as cancelled.
            if let current { current.close(code, reason: reason) } else { stopOpening(.cancelled(.explicit)) }
        }
    }

    /// Ends the socket at once with `error` (a cancel).
    func abort(_ error: TernError) {
        refuseSends(error)
        queue.async { [self] in
            guard !isStopped else { return }
            isStopped = true
            if let current { current.abort(error) } else { stopOpening(error) }
        }
    }

    /// From now on a send fails with `error` (unless one came first): the app closed or
    /// cancelled the socket; what waited for a connection fails when the socket ends.
    private func refuseSends(_ error: TernError) {
        outbound.withLock { outbound in
            outbound.direct = nil
            if outbound.refusal == nil { outbound.refusal = error }
        }
    }

    /// Stops (or resumes) reading from the connection: the reader of the messages fell behind.
    func setReadingPaused(_ paused: Bool) {
        queue.async { [self] in
            isPaused = paused
            current?.setReadingPaused(paused)
        }
    }

    private func connect() {
        queue.assertIsCurrent()
        guard let opener else { return }
        generation += 1
        let number = generation
        live.withLock { $0 = number }
        opening = opener.open { outcome in self.queue.async { self.opened(outcome, number) } }
    }

    private func stopOpening(_ error: TernError) {
        opening?.cancel()
        opening = nil
        finish(.failed(error))
    }

    private func opened(_ outcome: WebSocketOpener.Outcome, _ number: Int) {
        queue.assertIsCurrent()
        guard number == generation, !isStopped else {
            if case .success(let opened) = outcome { opened.driver.abort(.cancelled(.explicit)) }
            return
        }
        opening = nil
        switch outcome {
        case .success(let (driver, agreement)):
            current = driver
            if policy.maxAttempts == 0 { opener = nil }  // it never connects again
            // Each connection holds its socket until it ends; its late events are told apart by number.
            driver.begin(agreement) { event in self.inner(event, of: number) }
            // What waited goes first, in order; then sends go straight to the connection.
            while true {
                let waited = outbound.withLock { outbound in
                    defer { outbound.waiting = [] }
                    // Unless the app closed it meanwhile: then sends stay refused.
                    if outbound.waiting.isEmpty, outbound.refusal == nil { outbound.direct = driver }
                    return outbound.waiting
                }
                if waited.isEmpty { break }
                for (message, done) in waited { driver.send(message, done: done) }
            }
            driver.setReadingPaused(isPaused)  // a parked connection does not read until now
        case .failure(let error):
            ended(.failed(error))
        }
    }

    /// A connection's event, on its queue: the opening and messages of the live connection pass
    /// straight to the socket; its end is this driver's to decide.
    private func inner(_ event: WebSocketDriverEvent, of number: Int) {
        switch event {
        case .opened, .message, .reconnecting:
            guard live.withLock({ $0 }) == number else { return }
            if case .opened = event { queue.async { if number == self.generation { self.openedAt = .now() } } }
            events(event)
        case .ended(let ending):
            queue.async { [self] in
                guard number == generation else { return }
                let sent = current?.sentCloseCode
                lastSentClose.withLock { $0 = sent }
                current = nil
                outbound.withLock { $0.direct = nil }
                if let openedAt, DispatchTime.now().uptimeNanoseconds - openedAt.uptimeNanoseconds >= UInt64(policy.stableAfter * 1e9) {
                    failures = 0
                }
                openedAt = nil
                ended(ending)
            }
        }
    }

    private func ended(_ ending: WebSocketEnding) {
        queue.assertIsCurrent()
        guard !isStopped, opener != nil, let delay = policy.delay(after: ending, attempt: failures + 1) else { return finish(ending) }
        failures += 1
        events(.reconnecting(attempt: failures, after: delay, ending))
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self, !self.isStopped else { return }
            self.connect()
        }
    }

    private func finish(_ ending: WebSocketEnding) {
        queue.assertIsCurrent()
        isStopped = true
        let refusal = WebSocket.error(of: ending)
        let waiting = outbound.withLock { outbound in
            outbound.refusal = outbound.refusal ?? refusal
            outbound.direct = nil
            defer { outbound.waiting = [] }
            return outbound.waiting
        }
        for (_, done) in waiting { done(refusal) }
        events(.ended(ending))
    }
}
