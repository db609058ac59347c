import Foundation

/// Collects a client's `ClientMetrics` as its requests end: one short lock per request, taken
/// by the request's `CallTally` when it ends (and once more for an exchange that ends after
/// its request, a cancelled one).
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
        #if DEBUG
        /// How often the lock was taken, for the test that holds it to one per request.
        var lockTakes = 0
        #endif
    }
    private let state: Locked<State>
    private static let window = 1024

    /// Totals of the client named `client` (its metrics' `client` label).
    init(client: String) {
        state = Locked(State(metrics: ClientMetrics(client: client, date: Date())))
    }

    /// Bytes and connections of a request's exchanges.
    struct ExchangeTotals {
        var sent: Int64 = 0
        var received: Int64 = 0
        var opened = 0
        var reused = 0

        mutating func add(sent: Int64, received: Int64, reused: Bool?) {
            self.sent += sent
            self.received += received
            switch reused {
            case true?: self.reused += 1
            case false?: opened += 1
            case nil: break
            }
        }
    }

    /// Exchanges ended with these totals; a request that ended with `error` (nil: success) after
    /// `seconds`, when `ended` (nil: only exchanges, which ended after their request).
    func add(_ totals: ExchangeTotals, ended: (error: TernError?, seconds: TimeInterval)?) {
        let failure = ended?.error.map(Self.kind)
        state.withLock { state in
            #if DEBUG
            state.lockTakes += 1
            #endif
            state.metrics.bytesSent += totals.sent
            state.metrics.bytesReceived += totals.received
            state.metrics.connectionsOpened += totals.opened
            state.metrics.connectionsReused += totals.reused
            guard let ended else { return }
            if let failure { state.metrics.requestsByOutcome[failure, default: 0] += 1 } else { state.successes += 1 }
            state.metrics.latency.count += 1
            state.metrics.latency.totalSeconds += ended.seconds
            if state.durations.count < Self.window {
                state.durations.append(ended.seconds)
            } else {
                state.durations[state.next] = ended.seconds
            }
            state.next = (state.next + 1) % Self.window
        }
    }

    #if DEBUG
    /// How often the lock was taken.
    var lockTakes: Int { state.withLock { $0.lockTakes } }
    #endif

    /// The totals now; `inFlight`: exchanges on the network now, `queued`: the transport's
    /// per-origin queues.
    func snapshot(inFlight: Int, queued: [String: Int]) -> ClientMetrics {
        let (taken, successes, durations) = state.withLock { ($0.metrics, $0.successes, $0.durations) }
        var metrics = taken
        if successes > 0 { metrics.requestsByOutcome["success"] = successes }
        metrics.date = Date()
        metrics.inFlight = inFlight
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

/// One call's part in its client's metrics: its exchanges' bytes and connections, added up as
/// they end, and counted with the request's end in one take of the client's lock.
/// Thread safety: safe to use from any thread (its own lock).
struct CallTally: CallObserver {
    private struct State {
        var totals = ClientStatistics.ExchangeTotals()
        var isCounted = false
    }

    private let statistics: ClientStatistics
    private let state = Locked(State())

    init(_ statistics: ClientStatistics) { self.statistics = statistics }

    var wantsEvents: Bool { false }

    func exchangeEnded(sent: Int64, received: Int64, reused: Bool?) {
        // Added to the request's totals; an exchange that ends after its request was counted (a
        // cancelled one) goes to the client's on its own.
        let late = state.withLock { state -> ClientStatistics.ExchangeTotals? in
            var totals = state.isCounted ? ClientStatistics.ExchangeTotals() : state.totals
            totals.add(sent: sent, received: received, reused: reused)
            guard state.isCounted else {
                state.totals = totals
                return nil
            }
            return totals
        }
        if let late { statistics.add(late, ended: nil) }
    }

    func requestEnded(_ error: TernError?, seconds: TimeInterval) {
        let totals = state.withLock { state -> ClientStatistics.ExchangeTotals? in
            guard !state.isCounted else { return nil }
            state.isCounted = true
            return state.totals
        }
        if let totals { statistics.add(totals, ended: (error, seconds)) }
    }
}
