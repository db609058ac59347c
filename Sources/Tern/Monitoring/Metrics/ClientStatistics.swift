import Foundation

/// Collects a client's `ClientMetrics` as its requests run: one short lock per exchange start, per
/// exchange end and per request end.
/// Thread safety: safe to use from any thread.
final class ClientStatistics: Sendable {
    private struct State {
        var metrics: ClientMetrics
        /// Requests that succeeded (kept apart from `requestsByOutcome`: no string hashing on
        /// the common path).
        var successes = 0
        /// The latest durations, a ring of `window` entries; `next` is where the next one goes.
        var durations: [TimeInterval] = []
        var next = 0
    }
    private let state: Locked<State>
    private static let window = 1024

    /// Totals of the client named `client` (its metrics' `client` label).
    init(client: String) {
        state = Locked(State(metrics: ClientMetrics(client: client, date: Date())))
    }

    /// An exchange went to the network.
    func exchangeStarted() {
        state.withLock { $0.metrics.inFlight += 1 }
    }

    /// An exchange ended, having moved these bytes; `reused`: whether its connection was reused,
    /// nil when the transport did not say.
    func exchangeEnded(sent: Int64, received: Int64, reused: Bool?) {
        state.withLock { state in
            state.metrics.inFlight -= 1
            state.metrics.bytesSent += sent
            state.metrics.bytesReceived += received
            switch reused {
            case true?: state.metrics.connectionsReused += 1
            case false?: state.metrics.connectionsOpened += 1
            case nil: break
            }
        }
    }

    /// A request ended with `error` (nil: success) after `seconds`.
    func requestEnded(_ error: TernError?, seconds: TimeInterval) {
        let failure = error.map(Self.kind)
        state.withLock { state in
            if let failure { state.metrics.requestsByOutcome[failure, default: 0] += 1 } else { state.successes += 1 }
            state.metrics.latency.count += 1
            state.metrics.latency.totalSeconds += seconds
            if state.durations.count < Self.window {
                state.durations.append(seconds)
            } else {
                state.durations[state.next] = seconds
            }
            state.next = (state.next + 1) % Self.window
        }
    }

    /// The totals now; `queued`: the transport's per-origin queues.
    func snapshot(queued: [String: Int]) -> ClientMetrics {
        let (taken, successes, durations) = state.withLock { ($0.metrics, $0.successes, $0.durations) }
        var metrics = taken
        if successes > 0 { metrics.requestsByOutcome["success"] = successes }
        metrics.date = Date()
        metrics.queuedByOrigin = queued
        let sorted = durations.sorted()
        metrics.latency.sampleCount = sorted.count
        if !sorted.isEmpty {
            func percentile(_ p: Double) -> TimeInterval { sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)] }
            metrics.latency.p50 = percentile(0.5)
            metrics.latency.p90 = percentile(0.9)
            metrics.latency.p99 = percentile(0.99)
        }
        return metrics
    }

    /// The name of `error`'s case, its last failure's after retries.
    static func kind(of error: TernError) -> String {
        switch error.lastFailure {
        case .invalidRequest: "invalidRequest"
        case .transport: "transport"
        case .timedOut: "timedOut"
        case .deadlineExceeded: "deadlineExceeded"
        case .unacceptableStatus: "unacceptableStatus"
        case .unacceptableContentType: "unacceptableContentType"
        case .decoding: "decoding"
        case .cancelled: "cancelled"
        case .clientInvalidated: "clientInvalidated"
        case .cacheMiss: "cacheMiss"
        case .redirectFailed: "redirectFailed"
        case .rejected: "rejected"
        case .responseTooLarge: "responseTooLarge"
        case .business: "business"
        case .failedAfterRetries: "failedAfterRetries"
        case .pinningFailed: "pinningFailed"
        case .unsupportedConfiguration: "unsupportedConfiguration"
        case .webSocketFailed: "webSocketFailed"
        case .webSocketHandshakeFailed: "webSocketHandshakeFailed"
        case .requestBodyFailed: "requestBodyFailed"
        }
    }
}
