import Foundation
import TernCache

/// The outbox's store, kept where only the outbox's store lock reaches it.
// Sendable: the store is only used inside `Outbox.storage`'s lock, but for `body(of:)`, which
// only the outbox's work queue calls (the store reads it through a connection of its own).
final class OutboxStoreBox: @unchecked Sendable {
    let store: OutboxStore
    init(_ store: OutboxStore) { self.store = store }
}

/// Everything an outbox knows in memory, under its state lock: the items (without their bodies),
/// which are being sent, which wait for a retry, and the counts its limits check. The store has
/// a lock of its own (`Outbox.storage`), taken before this one when both are needed, so that no
/// disk write is waited for under this lock (a send's answer records itself here).
struct OutboxState: Sendable {
    /// An item in the sending order, with its ordering group (read without copying its record).
    struct Entry: Sendable {
        var seq: Int64
        var group: String?
    }

    /// Every kept item by sequence number.
    var records: [Int64: OutboxStore.Record] = [:]
    var seqByID: [String: Int64] = [:]
    /// The queued items, oldest first, from `orderStart` on; entries of items no longer queued
    /// are skipped, and dropped from the front as the items before them end.
    var order: [Entry] = []
    var orderStart = 0
    /// The items being sent, with their ordering group.
    var sending: [Int64: String?] = [:]
    var handles: [Int64: RequestHandle] = [:]
    /// Ordering groups with an item being sent: their next item waits.
    var busyGroups: Set<String> = []
    /// When a queued item that failed may be sent again (uptime nanoseconds).
    var dueAt: [Int64: UInt64] = [:]
    /// The failed sends of each item in this launch: the backoff counts these, not the attempts
    /// of earlier launches, so a wait is never inherited from them.
    var launchFailures: [Int64: Int] = [:]
    /// Items waiting after a connection failure, by origin: an answer from that origin sends them at once.
    var waitingForOrigin: [String: Set<Int64>] = [:]
    /// The group and retry policy of items enqueued in this run.
    var originals: [Int64: OutboxRequest.Original] = [:]
    /// Outcomes of sends, recorded together in one transaction.
    var outcomes: [(Int64, OutboxRequest.Outcome)] = []
    var isDrainScheduled = false
    /// Outcomes applied in memory and not yet written, with their events; written together.
    var unwritten: [OutboxStore.Record] = []
    var unwrittenEvents: [OutboxEvent] = []
    var isWriteScheduled = false
    /// A pump is on the work queue and has not looked at the items yet.
    var isPumpScheduled = false
    /// The outbox closed: nothing more is sent.
    var isClosed = false
    /// When the pending wake-up for the next retry fires (uptime nanoseconds), if one is set.
    var wakeAt: UInt64?
    /// The network monitor says the device is offline: nothing is sent.
    var isOffline = false
    /// Items queued or being sent.
    var pendingCount = 0
    /// Items queued, being sent or failed (those that hold a body), and their bodies' bytes.
    var keptCount = 0
    var keptBytes: Int64 = 0

    init(records: [OutboxStore.Record]) {
        for record in records { add(record, original: nil) }
    }

    /// Adds a stored item (accepted now, or by an earlier run).
    mutating func add(_ record: OutboxStore.Record, original: OutboxRequest.Original?) {
        records[record.seq] = record
        seqByID[record.id] = record.seq
        if let original { originals[record.seq] = original }
        if record.state != .delivered {
            keptCount += 1
            keptBytes += record.bodySize
        }
        if record.state == .queued {
            pendingCount += 1
            order.append(Entry(seq: record.seq, group: record.orderingGroup))
        }
    }

    func seq(of id: OutboxItem.ID) -> Int64? { seqByID[id.rawValue] }

    /// Whether the pump should be put on the work queue: true once until it runs.
    mutating func claimPump() -> Bool {
        defer { isPumpScheduled = true }
        return !isPumpScheduled
    }

    /// Drops the entries of items no longer queued from the front of `order`.
    mutating func trimOrder() {
        while orderStart < order.count, records[order[orderStart].seq]?.state != .queued { orderStart += 1 }
        if orderStart >= 256, orderStart * 2 >= order.count {
            order.removeFirst(orderStart)
            orderStart = 0
        }
    }

    /// The limit that accepting one more item of `bytes` would pass, if any.
    func limitReached(adding bytes: Int64, _ configuration: OutboxConfiguration) -> OutboxError.Limit? {
        if keptCount >= configuration.maximumCount { return .count(configuration.maximumCount) }
        if keptBytes + bytes > configuration.maximumBytes { return .bytes(configuration.maximumBytes) }
        return nil
    }

    /// Forgets the item `id`; returns its record and the handle of its send, if one is in flight.
    mutating func remove(_ id: OutboxItem.ID) -> (record: OutboxStore.Record, handle: RequestHandle?)? {
        guard let seq = seqByID.removeValue(forKey: id.rawValue), let record = records.removeValue(forKey: seq) else { return nil }
        dueAt[seq] = nil
        originals[seq] = nil
        launchFailures[seq] = nil
        if record.state != .delivered {
            keptCount -= 1
            keptBytes -= record.bodySize
        }
        if record.state == .queued { pendingCount -= 1 }
        return (record, handles[seq])
    }

    /// Puts a failed item back in the queue, in its place; returns its record.
    mutating func requeue(_ id: OutboxItem.ID, now: Int64) -> OutboxStore.Record? {
        guard let seq = seq(of: id), var record = records[seq], record.state == .failed else { return nil }
        record.state = .queued
        record.status = nil
        record.resultBody = nil
        record.failure = nil
        record.finished = nil
        record.created = now
        records[seq] = record
        pendingCount += 1
        let index = order[orderStart...].firstIndex { $0.seq > seq } ?? order.endIndex
        order.insert(Entry(seq: seq, group: record.orderingGroup), at: index)
        return record
    }

    /// Ends a queued item for good: delivered, or failed with `failure`.
    mutating func finish(_ record: inout OutboxStore.Record, delivered: Bool, failure: OutboxFailure?, now: Int64) {
        record.finished = now
        record.state = delivered ? .delivered : .failed
        if let failure {
            switch failure {
            case .rejected(let code, let body):
                record.failure = "rejected"
                record.status = code
                record.resultBody = body
            case .expired: record.failure = "expired"
            case .unsendable(let reason): record.failure = "unsendable:" + reason
            }
        }
        pendingCount -= 1
        originals[record.seq] = nil
        launchFailures[record.seq] = nil
        if delivered {
            keptCount -= 1
            keptBytes -= record.bodySize
        }
        records[record.seq] = record
    }

    /// The public view of a stored item.
    func item(_ record: OutboxStore.Record) -> OutboxItem {
        let state: OutboxItem.State =
            switch record.state {
            case .queued: sending[record.seq] != nil ? .sending : .queued
            case .delivered: .delivered(statusCode: record.status ?? 0)
            case .failed: .failed(Self.failure(record))
            }
        return OutboxItem(
            id: OutboxItem.ID(record.id), method: HTTPMethod(rawValue: record.method),
            url: URL(string: record.url) ?? URL(fileURLWithPath: "/"), orderingGroup: record.orderingGroup,
            idempotencyKey: record.idempotencyKey, enqueuedAt: Date(timeIntervalSince1970: Double(record.created) / 1000),
            attempts: record.attempts, state: state, lastError: record.lastError, bodySize: Int(record.bodySize),
            responseBody: record.resultBody, finishedAt: record.finished.map { Date(timeIntervalSince1970: Double($0) / 1000) })
    }

    private static func failure(_ record: OutboxStore.Record) -> OutboxFailure {
        let failure = record.failure ?? ""
        if failure == "rejected" { return .rejected(statusCode: record.status ?? 0, body: record.resultBody ?? Data()) }
        if failure == "expired" { return .expired }
        return .unsendable(failure.hasPrefix("unsendable:") ? String(failure.dropFirst("unsendable:".count)) : failure)
    }
}
