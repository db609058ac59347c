import Foundation

/// Waits that double after each failure: the retry policy's, a socket's reconnections and the
/// outbox's resends.
///
/// The rule, in this order: the wait before try `n` (1 for the first) is `base × 2^(n−1)`,
/// capped at `maximum`; jitter then moves it by a random share of up to ± `jitter` (0.2: ±20 %),
/// and a wait jitter took past `maximum` is `maximum`. Capping before the jitter keeps waits
/// spread below the cap, where clients that failed together would otherwise try again together.
/// Thread safety: a value type, safe to share.
struct Backoff: Sendable, Equatable {
    /// The first wait, in seconds.
    var base: TimeInterval
    /// The longest wait, in seconds.
    var maximum: TimeInterval
    /// The largest share of a wait that jitter adds or takes away, 0 to 1.
    var jitter: Double

    /// The wait before try `attempt` (1 for the first after a failure), in seconds.
    func delay(attempt: Int) -> TimeInterval {
        let doublings = Double(min(max(attempt - 1, 0), 62))
        let capped = max(0, min(maximum, base * pow(2, doublings)))
        let spread = min(max(jitter, 0), 1) * Double.random(in: -1...1)
        return min(maximum, capped * (1 + spread))
    }
}
