import Foundation
import TernCache

/// Sending: which items go now (`pump`), and what their answers mean (`drain`). Both run on the
/// outbox's `work` queue. Memory is updated under the state lock, the store under its own lock
/// afterwards, and events are published once the store has them; sends start outside both.
extension Outbox {
    /// The largest response body kept with a delivered or rejected item.
    static let keptResponseLimit = 64 * 1024

    /// Runs `pump` on the work queue, unless one is already waiting there.
    func schedulePump() {
        if state.withLock({ $0.claimPump() }) { work.async { [weak self] in self?.pump() } }
    }

    /// An item to send, taken from the queue under the state lock.
    private struct Send {
        var record: OutboxStore.Record
        var original: OutboxRequest.Original?
    }

    /// Starts the sends there is room for: the oldest due items, one per ordering group, up to
    /// `maximumConcurrentSends`. Expired items fail on the way; a wake-up is set for the next retry.
    func pump() {
        let now = DispatchTime.now().uptimeNanoseconds
        let (sends, expired, wakeIn) = state.withLock { state in takeSends(&state, now: now) }
        if let wakeIn {
            work.asyncAfter(deadline: .now() + .nanoseconds(Int(min(wakeIn, UInt64(Int.max))))) { [weak self] in self?.pump() }
        }
        if !expired.isEmpty { commit(expired.map(\.record), events: expired.map { .failed($0.item) }) }
        guard !sends.isEmpty else { return }
        // Bodies are read through the store's reading connection (only ever from this queue),
        // not under the store's lock: a write being flushed does not hold them up. A send whose
        // body cannot be read waits.
        let bodies: [Int64: Data]? = reading.withLock { $0 }.map { box in
            var bodies: [Int64: Data] = [:]
            for send in sends where send.record.hasInlineBody {
                bodies[send.record.seq] = (try? box.store.body(of: send.record.seq)) ?? nil
            }
            return bodies
        }
        for send in sends {
            let seq = send.record.seq
            guard let bodies, !send.record.hasInlineBody || bodies[seq] != nil else {
                unreadable(send.record, now: now)
                continue
            }
            let request = OutboxRequest.make(
                send.record, body: bodies[seq], bodiesPath: bodiesPath, original: send.original, configuration: configuration,
                client: client)
            let handle = client.perform(request, queue: .immediate) { [weak self] _, result in self?.finished(seq, result) }
            let cancelNow = state.withLock { state -> Bool in
                guard state.sending[seq] != nil else { return false }
                if state.records[seq] == nil || state.isClosed { return true }
                state.handles[seq] = handle
                return false
            }
            if cancelNow { handle.cancel() }
        }
    }

    /// The items to send now (marked as sending), the expired ones (ended in memory), and in how
    /// many nanoseconds to look again.
    private func takeSends(
        _ state: inout OutboxState, now: UInt64
    ) -> ([Send], [(record: OutboxStore.Record, item: OutboxItem)], UInt64?) {
        state.isPumpScheduled = false
        guard !state.isClosed, !state.isOffline, !client.isInvalidated else { return ([], [], nil) }
        if let wake = state.wakeAt, wake <= now { state.wakeAt = nil }
        state.trimOrder()
        var slots = configuration.maximumConcurrentSends - state.sending.count
        var blocked = state.busyGroups
        var sends: [Send] = []
        var expired: [(record: OutboxStore.Record, item: OutboxItem)] = []
        var earliest: UInt64?
        var skipped = 0
        let nowMilliseconds = Self.milliseconds(Date())
        let maximumAge = Int64(configuration.maximumAge * 1000)
        for entry in state.order[state.orderStart...] {
            guard slots > 0 else { break }
            let seq = entry.seq
            if let group = entry.group, blocked.contains(group) { continue }
            if state.sending[seq] != nil {
                if let group = entry.group { blocked.insert(group) }
                continue
            }
            guard var record = state.records[seq], record.state == .queued else {
                skipped += 1
                continue
            }
            if nowMilliseconds - record.created > maximumAge {
                state.finish(&record, delivered: false, failure: .expired, now: nowMilliseconds)
                expired.append((record, state.item(record)))
                continue
            }
            if let due = state.dueAt[seq], due > now {
                earliest = min(earliest ?? due, due)
                if let group = entry.group { blocked.insert(group) }
                continue
            }
            state.sending[seq] = entry.group
            state.dueAt[seq] = nil
            if let group = entry.group {
                state.busyGroups.insert(group)
                blocked.insert(group)
            }
            sends.append(Send(record: record, original: state.originals[seq]))
            slots -= 1
        }
        if skipped > 32, skipped * 4 > state.order.count - state.orderStart {
            let records = state.records
            state.order.removeAll { records[$0.seq]?.state != .queued }
            state.orderStart = 0
        }
        guard let earliest, state.wakeAt.map({ earliest < $0 }) ?? true else { return (sends, expired, nil) }
        state.wakeAt = earliest
        return (sends, expired, earliest - now)
    }

    /// A taken item whose body could not be read (the outbox closed, or the store failed): it
    /// stays queued, and is tried again after a backoff.
    private func unreadable(_ record: OutboxStore.Record, now: UInt64) {
        let wakeIn = state.withLock { state -> UInt64? in
            if let group = state.sending.removeValue(forKey: record.seq), let group { state.busyGroups.remove(group) }
            guard !state.isClosed else { return nil }
            let delay = UInt64(retryDelay(attempts: (state.launchFailures[record.seq] ?? 0) + 1, retryAfter: nil) * 1e9)
            state.dueAt[record.seq] = now + delay
            return delay
        }
        if let wakeIn { work.asyncAfter(deadline: .now() + .nanoseconds(Int(wakeIn))) { [weak self] in self?.pump() } }
    }

    /// Writes `updated` in one transaction, then publishes `events` with the pending count then.
    /// A failed write loses only these outcomes: the items are sent again at the next launch with
    /// the same key, and the server answers as it did.
    func commit(_ updated: [OutboxStore.Record], removed: [OutboxStore.Record] = [], events: [OutboxEvent]) {
        guard !updated.isEmpty || !removed.isEmpty || !events.isEmpty else { return }
        storage.withLock { box in
            guard let box else { return }
            try? box.store.apply(updated: updated, removed: removed)
            let pendingCount = state.withLock { state in
                // A delivered item's answer is read from the store from now on (`item(_:)`):
                // delivered items are not limited in number, their answers not kept in memory.
                for record in updated where record.state == .delivered { state.records[record.seq]?.resultBody = nil }
                return state.pendingCount
            }
            hub.publish(events, pendingCount: pendingCount)
        }
    }

    /// Records a send's answer; the outcomes that arrive together are written in one transaction.
    private func finished(_ seq: Int64, _ result: Result<Response<Data>, TernError>) {
        let outcome = OutboxRequest.outcome(of: result)
        let drainNow = state.withLock { state -> Bool in
            state.outcomes.append((seq, outcome))
            defer { state.isDrainScheduled = true }
            return !state.isDrainScheduled
        }
        if drainNow { work.async { [weak self] in self?.drain() } }
    }

    /// Applies the outcomes recorded so far in memory, starts the next sends, then writes the
    /// outcomes (one transaction) and publishes them.
    private func drain() {
        let (updated, events) = state.withLock { state -> ([OutboxStore.Record], [OutboxEvent]) in
            let outcomes = state.outcomes
            state.outcomes = []
            state.isDrainScheduled = false
            let now = DispatchTime.now().uptimeNanoseconds
            let nowMilliseconds = Self.milliseconds(Date())
            var updated: [OutboxStore.Record] = []
            var events: [OutboxEvent] = []
            for (seq, outcome) in outcomes {
                if let group = state.sending.removeValue(forKey: seq), let group { state.busyGroups.remove(group) }
                state.handles[seq] = nil
                // Cancelled meanwhile, or interrupted (cancelled, the client invalidated): nothing to record.
                guard var record = state.records[seq], record.state == .queued else { continue }
                switch outcome {
                case .interrupted:
                    continue
                case .delivered(let code, let body):
                    wakeWaiting(for: record, in: &state, now: now)
                    record.attempts += 1
                    record.status = code
                    record.resultBody = body.count <= Self.keptResponseLimit ? body : body.prefix(Self.keptResponseLimit)
                    record.lastError = nil
                    state.finish(&record, delivered: true, failure: nil, now: nowMilliseconds)
                    events.append(.delivered(state.item(record)))
                case .failed(let failure):
                    if case .rejected = failure { wakeWaiting(for: record, in: &state, now: now) }
                    record.attempts += 1
                    state.finish(&record, delivered: false, failure: failure, now: nowMilliseconds)
                    events.append(.failed(state.item(record)))
                case .retry(let retryAfter, let reason, let connectionFailed):
                    if connectionFailed {
                        state.waitingForOrigin[Self.origin(of: record.url), default: []].insert(seq)
                    } else {
                        wakeWaiting(for: record, in: &state, now: now)  // an answer: the origin is back
                    }
                    record.attempts += 1
                    record.lastError = reason
                    state.records[seq] = record
                    let failures = (state.launchFailures[seq] ?? 0) + 1
                    state.launchFailures[seq] = failures
                    let delay = retryDelay(attempts: failures, retryAfter: retryAfter, connectionFailed: connectionFailed)
                    state.dueAt[seq] = now + UInt64(delay * 1e9)
                    events.append(.willRetry(state.item(record), after: delay))
                }
                updated.append(record)
            }
            return (updated, events)
        }
        // The next items go while this outcome is written (on another queue, so that sends are
        // not held up by the disk): a kill before the write sends the finished ones again, with
        // their keys, before the next ones, so order holds at the server.
        let schedulesWrite = state.withLock { state -> Bool in
            state.unwritten += updated
            state.unwrittenEvents += events
            defer { state.isWriteScheduled = true }
            return !state.isWriteScheduled
        }
        if schedulesWrite { writes.async { [weak self] in self?.writeOutcomes() } }
        pump()
    }

    /// Writes the outcomes applied since the last write, in one transaction, then publishes them.
    func writeOutcomes() {
        let (updated, events) = state.withLock { state in
            defer {
                state.unwritten = []
                state.unwrittenEvents = []
                state.isWriteScheduled = false
            }
            return (state.unwritten, state.unwrittenEvents)
        }
        commit(updated, events: events)
    }

    /// The wait before sending an item again after its `attempts`-th failure in this launch: the
    /// server's `Retry-After`, else a doubling backoff with ±20 % jitter, both capped at
    /// `maximumRetryDelay`. A connection that was refused or broke (a server restarting) is tried
    /// again on a short schedule of its own: 0.25 s, doubling, at most 2 s.
    func retryDelay(attempts: Int, retryAfter: TimeInterval?, connectionFailed: Bool = false) -> TimeInterval {
        var maximum = max(0, configuration.maximumRetryDelay)
        if let retryAfter, retryAfter >= 0 { return min(retryAfter, maximum) }
        var initial = max(0, configuration.initialRetryDelay)
        if connectionFailed { (initial, maximum) = (min(initial, Self.connectionRetryDelay), min(maximum, Self.connectionRetryLimit)) }
        return Backoff(base: initial, maximum: maximum, jitter: 0.2).delay(attempt: attempts)
    }

    /// The first wait after a refused or broken connection.
    static let connectionRetryDelay: TimeInterval = 0.25
    /// The longest wait after a refused or broken connection.
    static let connectionRetryLimit: TimeInterval = 2

    /// `record`'s origin answered: the items waiting after a connection failure to it go now.
    private func wakeWaiting(for record: OutboxStore.Record, in state: inout OutboxState, now: UInt64) {
        // Nothing waits in the common case: no URL is parsed then.
        guard !state.waitingForOrigin.isEmpty,
            let waiting = state.waitingForOrigin.removeValue(forKey: Self.origin(of: record.url))
        else { return }
        for seq in waiting where state.dueAt[seq] != nil { state.dueAt[seq] = now }
    }

    /// The origin of a stored URL, as redirects compare origins.
    static func origin(of url: String) -> String {
        URL(string: url).map(RedirectStage.origin(of:)) ?? url
    }

    /// The network monitor reported a change: offline holds every send; back online, every
    /// queued item is due at once.
    func networkChanged(isReachable: Bool) {
        state.withLock { state in
            state.isOffline = !isReachable
            if isReachable { state.dueAt.removeAll() }
        }
        if isReachable { schedulePump() }
    }
}

extension OutboxStore.Record {
    /// Whether the body is stored in the row (read with `OutboxStore.body(of:)` before a send).
    fileprivate var hasInlineBody: Bool { bodyFile == nil && bodySize > 0 }
}
