import Foundation

/// Delivers an outbox's events, in order, to its `AsyncStream`s and its delegate.
///
/// Events published before anyone listened (an item of an earlier run delivered while the app was
/// still setting up) are kept, up to `backlogLimit`, for the first listener.
/// Thread safety: safe to use from any thread.
final class OutboxEventHub: Sendable {
    private struct State {
        var streams: [UInt64: AsyncStream<OutboxEvent>.Continuation] = [:]
        var countStreams: [UInt64: AsyncStream<Int>.Continuation] = [:]
        var nextToken: UInt64 = 0
        /// Events nobody heard yet; nil once a listener (an `events` stream or the delegate) has
        /// attached. Streams the outbox makes for itself (`outcome(of:)`) do not count.
        var backlog: [OutboxEvent]? = []
        var hasListener = false
        var pendingCount = 0
        var isFinished = false
        /// Publications not delivered yet, and whether a delivery is on the queue for them.
        var published: [(events: [OutboxEvent], pendingCount: Int)] = []
        var isDeliveryScheduled = false
    }

    static let backlogLimit = 1_000
    private let state = Locked(State())
    private let delegateBox = Locked(WeakOutboxDelegate(nil))
    /// Keeps publications in order: the outbox publishes under its lock, this queue delivers after.
    private let queue = DispatchQueue(label: "Tern.Outbox.events")
    private let callbackQueue: CallbackQueue

    /// Marks `queue`, so that work asked for from a callback it runs (an `.immediate` delegate)
    /// runs in place instead of waiting for itself.
    private static let queueKey = DispatchSpecificKey<Bool>()

    init(callbackQueue: CallbackQueue, pendingCount: Int) {
        self.callbackQueue = callbackQueue
        queue.setSpecific(key: Self.queueKey, value: true)
        state.withLock { $0.pendingCount = pendingCount }
    }

    var delegate: (any OutboxDelegate)? {
        get { delegateBox.withLock { $0.delegate } }
        set {
            // On the queue: events published before go to the backlog, which the delegate gets first.
            onQueue {
                delegateBox.withLock { $0 = WeakOutboxDelegate(newValue) }
                guard newValue != nil else { return }
                state.withLock { $0.hasListener = true }
                flushBacklog(to: nil)
            }
        }
    }

    /// Publishes `events` and the pending count after them; call in the order they happened.
    /// Publications made while a delivery waits for the queue go with it (one wake-up for many).
    func publish(_ events: [OutboxEvent], pendingCount: Int) {
        let schedules = state.withLock { state -> Bool in
            // Nobody listens and nothing waits to be delivered: kept for the first listener here,
            // without waking the queue (an app enqueueing before it listens).
            if !state.hasListener, !state.isDeliveryScheduled, state.streams.isEmpty, state.countStreams.isEmpty,
                var backlog = state.backlog
            {
                state.backlog = nil
                backlog.append(contentsOf: events)
                backlog.removeFirst(max(0, backlog.count - Self.backlogLimit))
                state.backlog = backlog
                state.pendingCount = pendingCount
                return false
            }
            state.published.append((events, pendingCount))
            defer { state.isDeliveryScheduled = true }
            return !state.isDeliveryScheduled
        }
        guard schedules else { return }
        queue.async {
            let published = self.state.withLock { state in
                state.isDeliveryScheduled = false
                defer { state.published = [] }
                return state.published
            }
            for publication in published { self.deliver(publication.events, pendingCount: publication.pendingCount) }
        }
    }

    private func deliver(_ events: [OutboxEvent], pendingCount: Int) {
        let delegate = delegateBox.withLock { $0.delegate }
        let outbox = owner.withLock { $0.outbox }
        let (streams, counts, countChanged) = state.withLock { state in
            if state.backlog != nil, delegate == nil, !state.hasListener {
                state.backlog!.append(contentsOf: events)
                state.backlog!.removeFirst(max(0, state.backlog!.count - Self.backlogLimit))
            } else {
                state.backlog = nil
            }
            let changed = state.pendingCount != pendingCount
            state.pendingCount = pendingCount
            return (Array(state.streams.values), Array(state.countStreams.values), changed)
        }
        for event in events { streams.forEach { $0.yield(event) } }
        if countChanged { counts.forEach { $0.yield(pendingCount) } }
        if let delegate, let outbox {
            callbackQueue.perform { events.forEach { delegate.outbox(outbox, didRecord: $0) } }
        }
    }

    /// The events from now on; the first stream (`takesBacklog`) also gets those nobody heard yet.
    func stream(takesBacklog: Bool) -> AsyncStream<OutboxEvent> {
        let (stream, continuation) = AsyncStream<OutboxEvent>.makeStream()
        onQueue {
            let (token, finished) = state.withLock { state in
                state.nextToken += 1
                if !state.isFinished { state.streams[state.nextToken] = continuation }
                if takesBacklog { state.hasListener = true }
                return (state.nextToken, state.isFinished)
            }
            if finished { return continuation.finish() }
            continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.streams.removeValue(forKey: token) } }
            if takesBacklog { flushBacklog(to: continuation) }
        }
        return stream
    }

    /// The pending count now, then every change.
    func pendingCounts() -> AsyncStream<Int> {
        let (stream, continuation) = AsyncStream<Int>.makeStream()
        onQueue {
            let (token, count, finished) = state.withLock { state in
                state.nextToken += 1
                if !state.isFinished { state.countStreams[state.nextToken] = continuation }
                return (state.nextToken, state.pendingCount, state.isFinished)
            }
            continuation.yield(count)
            if finished { return continuation.finish() }
            continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.countStreams.removeValue(forKey: token) } }
        }
        return stream
    }

    /// Runs `body` on the hub's queue, after what was published before, and waits for it.
    private func onQueue(_ body: () -> Void) {
        if DispatchQueue.getSpecific(key: Self.queueKey) == true { body() } else { queue.sync(execute: body) }
    }

    /// Hands the backlog to `continuation`, or to the delegate when nil; on the hub's queue.
    private func flushBacklog(to continuation: AsyncStream<OutboxEvent>.Continuation?) {
        let backlog = state.withLock { state in
            defer { state.backlog = nil }
            return state.backlog ?? []
        }
        guard !backlog.isEmpty else { return }
        if let continuation { return backlog.forEach { continuation.yield($0) } }
        guard let delegate = delegateBox.withLock({ $0.delegate }), let outbox = owner.withLock({ $0.outbox }) else { return }
        callbackQueue.perform { backlog.forEach { delegate.outbox(outbox, didRecord: $0) } }
    }

    /// The outbox the events are about, for its delegate; set once the outbox exists.
    private let owner = Locked(WeakOutbox(nil))

    func attach(_ outbox: Outbox) { owner.withLock { $0 = WeakOutbox(outbox) } }

    /// Ends every stream (the outbox closed).
    func finish() {
        queue.async {
            let (streams, counts) = self.state.withLock { state in
                state.isFinished = true
                defer { state.streams = [:]; state.countStreams = [:] }
                return (Array(state.streams.values), Array(state.countStreams.values))
            }
            streams.forEach { $0.finish() }
            counts.forEach { $0.finish() }
        }
    }
}

/// An outbox's delegate, weakly.
// Sendable: only read and replaced inside the hub's lock; weak loads are atomic.
final class WeakOutboxDelegate: @unchecked Sendable {
    weak var delegate: (any OutboxDelegate)?
    init(_ delegate: (any OutboxDelegate)?) { self.delegate = delegate }
}

/// The outbox a hub belongs to, weakly (the outbox owns the hub).
// Sendable: set once under the hub's lock; weak loads are atomic.
final class WeakOutbox: @unchecked Sendable {
    weak var outbox: Outbox?
    init(_ outbox: Outbox?) { self.outbox = outbox }
}
