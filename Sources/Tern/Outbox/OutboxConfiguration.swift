import Foundation

/// How an `Outbox` stores and sends its requests; every default is stated.
/// Thread safety: a value type, safe to share.
public struct OutboxConfiguration: Sendable {
    /// Where the outbox keeps its items. Default nil: `Application Support/Tern/Outbox/<name>`
    /// (on Linux `~/.local/share/Tern/Outbox/<name>`), never a caches directory the system may empty.
    public var directory: URL?
    /// The outbox's name, which picks its default directory; default `"default"`.
    public var name: String = "default"
    /// The most items kept waiting or failed; enqueueing one more throws
    /// `OutboxError.limitReached(.count)`. Default 1,000.
    public var maximumCount: Int = 1_000
    /// The most body bytes kept for items waiting or failed; default 50 MB.
    public var maximumBytes: Int64 = 50_000_000
    /// How long an item may wait: one not delivered this long after it was accepted fails with
    /// `OutboxFailure.expired`. Default 7 days.
    public var maximumAge: TimeInterval = 7 * 24 * 3600
    /// How many items are sent at once (items of one ordering group are always sent one at a
    /// time). Default 4.
    public var maximumConcurrentSends: Int = 4
    /// The first wait after a send that may pass failed, in seconds; it doubles with each
    /// further failure (±20 % jitter) up to `maximumRetryDelay`. A `Retry-After` from the server
    /// is honoured instead, up to `maximumRetryDelay`. Default 1 s.
    public var initialRetryDelay: TimeInterval = 1
    /// The longest wait between sends of one item; default 300 s.
    public var maximumRetryDelay: TimeInterval = 300
    /// How long a delivered item stays listed with its answer (`Outbox.item(_:)`), so that an
    /// app killed before it saw the outcome finds it at the next launch; default 1 day.
    public var keepsDeliveredFor: TimeInterval = 24 * 3600
    /// The connectivity monitor that holds sends while offline and replays when the network
    /// returns. Default nil: the client's `networkMonitor`, else none (sends are tried and back off).
    public var networkMonitor: NetworkMonitor?
    /// API groups whose hooks apply to items stored by an earlier run, found by `APIGroup.name`
    /// (in the run that enqueued an item, its own group applies). Default empty.
    public var groups: [APIGroup] = []
    /// The header carrying each item's idempotency key; default `"Idempotency-Key"`. A request
    /// that sets it itself keeps its own value.
    public var idempotencyKeyHeader: String = "Idempotency-Key"
    /// Whether an accepted item survives a power cut, not only a killed app: its write is flushed
    /// to the disk before `enqueue` returns. Default true.
    public var flushesEachWrite: Bool = true

    /// The defaults.
    public init() {}

    /// The directory the outbox opens: `directory`, else the default one for `name`.
    var resolvedDirectory: URL {
        if let directory { return directory }
        let base =
            FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        return base.appendingPathComponent("Tern/Outbox/\(name)", isDirectory: true)
    }
}
