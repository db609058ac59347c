import Foundation

/// What a WebSocket tells the client's monitors (`ClientConfiguration.monitors`), in the events
/// every request uses, so loggers and metrics see sockets with no new case to handle:
/// `.created` with the upgrade request; each connection's upgrade call reports its own attempts
/// on the socket's channel (`.attemptStarted` after its adapters, `.responseReceived` with the
/// 101 or the refusal, redirects and restarts); then `.progress` for each message either way (the
/// bytes so far in that direction), `.retrying` before a reconnection, and at the end
/// `.cancelled` when cancelled, then `.finished` — an error unless the socket closed with 1000 or 1001.
/// Thread safety: its tally is locked; its events go to each monitor's queue.
final class WebSocketMonitor: Sendable {
    private struct Tally {
        /// Connections tried: the first, and one more for each reconnection.
        var attempts = 1
        var sent: Int64 = 0
        var received: Int64 = 0
        var opened = false
    }

    private let monitors: MonitorSink?
    private let span: SpanObserver?
    private let started = DispatchTime.now()
    private let tally = Locked(Tally())

    /// A monitor for the socket numbered `id`, or nil when the client has neither monitors nor a
    /// tracer. With a tracer the socket is one span, from its creation to its end, continuing the
    /// trace it was opened in (`TraceContext.current`).
    init?(client: Client, id: UInt64, url: URL, tags: Set<String>) {
        let (monitors, tracer) = (client.configuration.monitors, client.configuration.tracer)
        guard !monitors.isEmpty || tracer != nil else { return nil }
        self.monitors = monitors.isEmpty ? nil : MonitorSink(monitors: monitors, requestID: id, method: .get, url: url, tags: tags)
        span = tracer.map {
            SpanObserver($0, for: TracedRequest(requestID: id, method: .get, url: url, tags: tags, parent: TraceContext.current))
        }
    }

    /// What the socket's upgrade calls report to (`WebSocketUpgrade`).
    var upgradeObserver: any CallObserver { UpgradeReporter(monitors: monitors, span: span) }

    /// The socket was prepared and admitted: `request` is its upgrade request.
    func created(_ request: URLRequest) { tell(.created(request)) }

    /// Tells the monitors, and the span unless `toSpan` is false (a socket's messages are not
    /// span events: a busy socket would give its span thousands).
    private func tell(_ event: RequestEvent.Kind, toSpan: Bool = true) {
        monitors?.record(event)
        if toSpan { span?.record(event) }
    }

    /// The app's `message` went to the connection.
    func sent(_ message: WebSocketMessage) {
        let total = tally.withLock {
            $0.sent += Int64(message.byteCount)
            return $0.sent
        }
        tell(.progress(TransferProgress(direction: .upload, completedBytes: total, expectedBytes: nil)), toSpan: false)
    }

    /// What the socket's driver reported.
    func observe(_ event: WebSocketDriverEvent) {
        switch event {
        case .opened:
            tally.withLock { $0.opened = true }
        case .message(let message):
            let total = tally.withLock {
                $0.received += Int64(message.byteCount)
                return $0.received
            }
            tell(.progress(TransferProgress(direction: .download, completedBytes: total, expectedBytes: nil)), toSpan: false)
        case .reconnecting(_, let delay, let ending):
            let attempt = tally.withLock { tally in
                defer { tally.attempts += 1 }
                return tally.attempts
            }
            tell(.retrying(attempt: attempt, delay: delay, error: WebSocket.error(of: ending)))
        case .ended(let ending):
            finished(ending)
        }
    }

    private func finished(_ ending: WebSocketEnding) {
        let error: TernError?
        switch ending {
        case .closed(let code, _) where code == .normalClosure || code == .goingAway: error = nil
        case .closed(let code, let reason): error = .webSocketFailed(code: code, reason: reason)
        case .failed(let failure): error = failure
        }
        if case .cancelled(let reason)? = error { tell(.cancelled(reason)) }
        let tally = self.tally.withLock { $0 }
        tell(
            .finished(
                RequestOutcome(
                    statusCode: tally.opened ? 101 : nil, error: error, source: tally.opened ? .network : nil,
                    duration: Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9,
                    attempts: tally.attempts, redirects: 0, bytes: Int(clamping: tally.received), body: nil)))
    }
}

/// What a socket's upgrade call tells: its attempts, redirects and answers, to the socket's
/// monitors and span; its beginning and end are the socket's, which tells them itself.
private struct UpgradeReporter: CallObserver {
    let monitors: MonitorSink?
    let span: SpanObserver?

    func willSend(_ request: URLRequest) -> URLRequest { span?.willSend(request) ?? request }

    func record(_ event: RequestEvent.Kind) {
        switch event {
        case .created, .cancelled, .finished: return
        default:
            monitors?.record(event)
            span?.record(event)
        }
    }
}
