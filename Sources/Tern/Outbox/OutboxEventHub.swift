import Foundation

/// Delivers an outbox's events, in order, to its `AsyncStream`s and its delegate.
///
/// Events published before anyone listened (an item of an earlier run delivered while the app was
/// still setting up) are kept, up to `backlogLimit`, for the first listener.
/// Thread safety: safe to use from any thread.
final class OutboxEventHub: Sendable {
    private struct State {
        /// Events nobody heard yet; nil once a listener (an `events` stream or the delegate) has
        /// attached. Streams the outbox makes for itself (`outcome(of:)`) do not count.
        var backlog: [OutboxEvent]? = []
        var hasListener = false
        var pendingCount = 0
        /// Publications not delivered yet, and whether a delivery is on the queue for them.
        var published: [(events: [OutboxEvent], pendingCount: Int)] = []
        var isDeliveryScheduled = false
    }

    static let backlogLimit = 1_000
    private let state = Locked(State())
    private let events = Broadcast<OutboxEvent>()
    private let counts = Broadcast<Int>()
    private let delegateBox = Weak<AnyObject>()
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
        get { delegateBox.object as? any OutboxDelegate }
        set {
            // On the queue: events published before go to the backlog, which the delegate gets first.
            onQueue {
                delegateBox.object = newValue
                guard newValue != nil else { return }
                state.withLock { $0.hasListener = true }
                flushBacklogToDelegate()
            }
        }
    }

    /// Publishes `events` and the pending count after them; call in the order they happened.
    /// Publications made while a delivery waits for the queue go with it (one wake-up for many).
    func publish(_ events: [OutboxEvent], pendingCount: Int) {
        let schedules = state.withLock { state -> Bool in
            // Nobody listens and nothing waits to be delivered: kept for the first listener here,
            // without waking the queue (an app enqueueing before it listens).
            if !state.hasListener, !state.isDeliveryScheduled, !self.events.hasListeners, !counts.hasListeners,
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
        let delegate = delegateBox.object as? any OutboxDelegate
        let outbox = owner.object
        let countChanged = state.withLock { state in
            if state.backlog != nil, delegate == nil, !state.hasListener {
                state.backlog!.append(contentsOf: events)
                state.backlog!.removeFirst(max(0, state.backlog!.count - Self.backlogLimit))
            } else {
                state.backlog = nil
            }
            defer { state.pendingCount = pendingCount }
            return state.pendingCount != pendingCount
        }
        events.forEach(self.events.send)
        if countChanged { counts.send(pendingCount) }
        if let delegate, let outbox {
            callbackQueue.perform { events.forEach { delegate.outbox(outbox, didRecord: $0) } }
        }
    }

    /// The events from now on; the first stream (`takesBacklog`) also gets those nobody heard yet.
    func stream(takesBacklog: Bool) -> AsyncStream<OutboxEvent> {
        // On the queue: no delivery comes between the backlog and the stream's first event.
        onQueue {
            guard takesBacklog else { return events.stream() }
            let backlog = state.withLock { state in
                state.hasListener = true
                defer { state.backlog = nil }
                return state.backlog ?? []
            }
            return events.stream(first: backlog)
        }
    }

    /// The pending count now, then every change.
    func pendingCounts() -> AsyncStream<Int> {
        onQueue { counts.stream(first: [state.withLock { $0.pendingCount }]) }
    }

    /// Runs `body` on the hub's queue, after what was published before, and waits for it.
    private func onQueue<Result>(_ body: () -> Result) -> Result {
        if DispatchQueue.getSpecific(key: Self.queueKey) == true { return body() } else { return queue.sync(execute: body) }
    }

    /// Hands the backlog to the delegate; on the hub's queue.
    private func flushBacklogToDelegate() {
        let backlog = state.withLock { state in
            defer { state.backlog = nil }
            return state.backlog ?? []
        }
        guard !backlog.isEmpty, let delegate = delegateBox.object as? any OutboxDelegate, let outbox = owner.object else { return }
        callbackQueue.perform { backlog.forEach { delegate.outbox(outbox, didRecord: $0) } }
    }

    /// The outbox the events are about, for its delegate; set once the outbox exists.
    private let owner = Weak<Outbox>()

    func attach(_ outbox: Outbox) { owner.object = outbox }

    /// Ends every stream (the outbox closed).
    func finish() {
        queue.async {
            self.events.finish()
            self.counts.finish()
        }
    }
}
