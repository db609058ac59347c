import Foundation

extension Client {
    /// The client's totals now: exchanges in flight and queued, requests by outcome, connections,
    /// bytes and recent latency (see `ClientMetrics`; `prometheusText()` renders it for
    /// Prometheus). Cheap: a lock and a copy, and a sort of up to 1,024 durations.
    public var metrics: ClientMetrics {
        statistics.snapshot(inFlight: exchangesInFlight, queued: queuedByOrigin)
    }

    /// The requests whose exchange is on the network now.
    private var exchangesInFlight: Int {
        registry.withLock { Array($0.lifecycles.values) }.reduce(0) { $0 + ($1.read(\.exchange) == nil ? 0 : 1) }
    }

    /// A snapshot of `metrics` every `interval` seconds (the first at once), until the task
    /// iterating it is cancelled or stops. A reader that falls behind gets the newest snapshot,
    /// not a backlog of old ones.
    public func metricsUpdates(every interval: TimeInterval) -> AsyncStream<ClientMetrics> {
        let nanoseconds = UInt64(max(0.01, interval) * 1e9)
        return AsyncStream(bufferingPolicy: .bufferingNewest(1)) { continuation in
            let ticker = Task { [weak self] in
                while !Task.isCancelled, let self {
                    continuation.yield(self.metrics)
                    try? await Task.sleep(nanoseconds: nanoseconds)
                }
                continuation.finish()
            }
            continuation.onTermination = { _ in ticker.cancel() }
        }
    }

    /// The transport's per-origin queues, where it has them.
    private var queuedByOrigin: [String: Int] {
        #if canImport(Glibc) || canImport(Musl)
        (transport as? CurlTransport)?.queuedByOrigin ?? [:]
        #else
        [:]
        #endif
    }
}
