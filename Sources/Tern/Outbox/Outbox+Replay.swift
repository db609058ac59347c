import Foundation
import TernCache

/// Sending: which items go now (`pump`), and what their answers mean (`drain`). Both run on the
/// outbox's `work` queue; each takes the lock once, and sends start outside it.
extension Outbox {
    /// The largest response body kept with a delivered or rejected item.
    static let keptResponseLimit = 64 * 1024

    /// Runs `pump` on the work queue.
    func schedulePump() {
        work.async { [weak self] in self?.pump() }
    }

    /// Starts the sends there is room for: the oldest due items, one per ordering group, up to
    /// `maximumConcurrentSends`. Expired items fail on the way; a wake-up is set for the next retry.
    func pump() {
        guard !client.isInvalidated else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        let (sends, wakeIn) = state.withLock { state in takeSends(&state, now: now) }
        if let wakeIn {
            work.asyncAfter(deadline: .now() + .nanoseconds(Int(min(wakeIn, UInt64(Int.max))))) { [weak self] in self?.pump() }
        }
        for (seq, request) in sends {
            let handle = client.perform(request, queue: .immediate) { [weak self] _, result in self?.finished(seq, result) }
            let cancelNow = state.withLock { state -> Bool in
                guard state.sending[seq] != nil else { return false }
                if state.records[seq] == nil || state.store == nil { return true }
                state.handles[seq] = handle
                return false
            }
            if cancelNow { handle.cancel() }
        }
    }

    /// The requests to send now (marked as sending), and in how many nanoseconds to look again.
    private func takeSends(_ state: inout OutboxState, now: UInt64) -> ([(Int64, Request<Data>)], UInt64?) {
        guard let box = state.store, !state.isOffline else { return ([], nil) }
        if let wake = state.wakeAt, wake <= now { state.wakeAt = nil }
        var slots = configuration.maximumConcurrentSends - state.sending.count
        var blocked = state.busyGroups
        var sends: [(Int64, Request<Data>)] = []
        var expired: [OutboxStore.Record] = []
        var earliest: UInt64?
        var skipped = 0
        let nowMilliseconds = Self.milliseconds(Date())
        let maximumAge = Int64(configuration.maximumAge * 1000)
        for seq in state.order {
            guard slots > 0 else { break }
            guard var record = state.records[seq], record.state == .queued else {
                skipped += 1
                continue
            }
            let group = record.orderingGroup
            if state.sending[seq] != nil || group.map(blocked.contains) == true {
                if let group { blocked.insert(group) }
                continue
            }
            if nowMilliseconds - record.created > maximumAge {
                state.finish(&record, delivered: false, failure: .expired, now: nowMilliseconds)
                expired.append(record)
                continue
            }
            if let due = state.dueAt[seq], due > now {
                earliest = min(earliest ?? due, due)
                if let group { blocked.insert(group) }
                continue
            }
            let body = record.bodyFile == nil && record.bodySize > 0 ? (try? box.store.body(of: seq)) ?? nil : nil
            let request = OutboxRequest.make(
                record, body: body, bodiesPath: box.store.bodiesPath, original: state.originals[seq],
                configuration: configuration, client: client)
            state.sending[seq] = group
            state.dueAt[seq] = nil
            if let group {
                state.busyGroups.insert(group)
                blocked.insert(group)
            }
            sends.append((seq, request))
            slots -= 1
        }
        if skipped > 32, skipped * 4 > state.order.count {
            let records = state.records
            state.order.removeAll { records[$0]?.state != .queued }
        }
        if !expired.isEmpty {
            try? box.store.apply(updated: expired, removed: [])
            hub.publish(expired.map { .failed(state.item($0)) }, pendingCount: state.pendingCount)
        }
        guard let earliest, state.wakeAt.map({ earliest < $0 }) ?? true else { return (sends, nil) }
        state.wakeAt = earliest
        return (sends, earliest - now)
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

    /// Applies the outcomes recorded so far, then sends what is next.
    private func drain() {
        state.withLock { state in
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
                    record.attempts += 1
                    record.status = code
                    record.resultBody = body.count <= Self.keptResponseLimit ? body : body.prefix(Self.keptResponseLimit)
                    record.lastError = nil
                    state.finish(&record, delivered: true, failure: nil, now: nowMilliseconds)
                    events.append(.delivered(state.item(record)))
                case .failed(let failure):
                    record.attempts += 1
                    state.finish(&record, delivered: false, failure: failure, now: nowMilliseconds)
                    events.append(.failed(state.item(record)))
                case .retry(let retryAfter, let reason):
                    record.attempts += 1
                    record.lastError = reason
                    state.records[seq] = record
                    let delay = retryDelay(attempts: record.attempts, retryAfter: retryAfter)
                    state.dueAt[seq] = now + UInt64(delay * 1e9)
                    events.append(.willRetry(state.item(record), after: delay))
                }
                updated.append(record)
            }
            // A failed write loses only this outcome: the item is sent again at the next launch
            // with the same key, and the server answers as it did.
            try? state.store?.store.apply(updated: updated, removed: [])
            hub.publish(events, pendingCount: state.pendingCount)
        }
        pump()
    }

    /// The wait before sending an item again: the server's `Retry-After`, else a doubling backoff
    /// with ±20 % jitter, both capped at `maximumRetryDelay`.
    private func retryDelay(attempts: Int, retryAfter: TimeInterval?) -> TimeInterval {
        let maximum = max(0, configuration.maximumRetryDelay)
        if let retryAfter, retryAfter >= 0 { return min(retryAfter, maximum) }
        let backoff = max(0, configuration.initialRetryDelay) * pow(2, Double(min(max(attempts - 1, 0), 30)))
        return min(backoff * Double.random(in: 0.8...1.2), maximum)
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
