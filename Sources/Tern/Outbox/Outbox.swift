import Foundation
import TernCache

/// Requests that must reach the server exactly once, even when the user acts offline and the app
/// is killed before the network returns: a "like", a sent message, a submitted form.
///
/// `enqueue` stores the request on disk (its URL, method, headers and body) with an
/// `Idempotency-Key` generated once, and returns only when it is there; the outbox then sends it
/// at once when online, and again, with the same key, until the server answers: when the network
/// returns, at each launch (items of earlier runs are replayed), and on `replay()`. Items of one
/// ordering group go one at a time in the order accepted; groups go concurrently.
/// ```swift
/// let outbox = try Outbox(client: api)
/// let id = try outbox.enqueue(Request<JSON>("favourites", method: .post, body: .json(["city": "成都"])))
/// for await event in outbox.events { if case .delivered(let item) = event, item.id == id { done() } }
/// ```
/// A 2xx delivers the item; a 4xx other than 408, 409, 425 and 429 fails it for good (kept for
/// the app to inspect, `retry` or `cancel`); a 5xx, those four, a lost connection or a timeout is
/// tried again after a backoff (or the server's `Retry-After`). The client's hooks, authentication and
/// retry policy apply to every send. A kill at any moment loses no accepted item; a kill between
/// a send and the record of its answer sends it again with the same key, which a server that
/// honours `Idempotency-Key` answers without a second effect.
/// Thread safety: safe to use from any thread.
public final class Outbox: Sendable {
    /// The client every item is sent with.
    public let client: Client
    /// The configuration the outbox was opened with.
    public let configuration: OutboxConfiguration
    /// The directory the outbox keeps its items in.
    public let directory: URL
    let state: Locked<OutboxState>
    /// The store, nil once closed. Taken before `state` when both are needed, never inside it.
    let storage: Locked<OutboxStoreBox?>
    /// The same store for reading bodies before a send, behind a lock no write holds.
    let reading: Locked<OutboxStoreBox?>
    /// Where the store keeps bodies sent from files, and copies them first.
    let bodiesPath: String
    let temporaryPath: String
    let hub: OutboxEventHub
    /// Where outcomes are applied and sends started, one at a time.
    let work = DispatchQueue(label: "Tern.Outbox")
    /// Where outcomes are written to the store, one transaction at a time.
    let writes = DispatchQueue(label: "Tern.Outbox.writes")
    private let networkToken = Locked<NetworkMonitorToken?>(nil)

    /// Opens the outbox in `configuration`'s directory (creating it) and starts sending what an
    /// earlier run left in it.
    /// - Throws: `OutboxError.storage` when the store cannot open, `.directoryInUse` when another
    ///   outbox of this process has the directory open.
    public init(client: Client, configuration: OutboxConfiguration = OutboxConfiguration()) throws(OutboxError) {
        let directory = configuration.resolvedDirectory.standardizedFileURL
        guard Self.openDirectories.withLock({ $0.insert(directory.path).inserted }) else { throw .directoryInUse(directory) }
        let store: OutboxStore
        let records: [OutboxStore.Record]
        do {
            store = try OutboxStore(directory: directory, synchronous: configuration.flushesEachWrite)
            _ = try store.purgeDelivered(finishedBefore: Self.milliseconds(Date()) - Int64(configuration.keepsDeliveredFor * 1000))
            records = try store.records()
        } catch {
            Self.openDirectories.withLock { _ = $0.remove(directory.path) }
            throw .storage(error)
        }
        self.client = client
        self.configuration = configuration
        self.directory = directory
        let state = OutboxState(records: records)
        self.state = Locked(state)
        let box = OutboxStoreBox(store)
        storage = Locked(box)
        reading = Locked(box)
        bodiesPath = store.bodiesPath
        temporaryPath = store.temporaryPath
        hub = OutboxEventHub(callbackQueue: client.configuration.callbackQueue, pendingCount: state.pendingCount)
        hub.attach(self)
        if let monitor = configuration.networkMonitor ?? client.configuration.networkMonitor {
            self.state.withLock { $0.isOffline = !monitor.status.isReachable }
            let token = monitor.onChange { [weak self] status in self?.networkChanged(isReachable: status.isReachable) }
            networkToken.withLock { $0 = token }
        }
        schedulePump()
    }

    deinit { close() }

    /// The directories open in this process: one outbox per directory.
    private static let openDirectories = Locked(Set<String>())

    /// Stores `request` and sends it when it can; returns once the item is on disk.
    ///
    /// The request is built now, as its client would send it (its group's base URL and headers,
    /// parameter encodings and parameter and URL hooks); the client's own headers, adapters and
    /// authentication apply at each send. A body from a file or a large multipart form is copied
    /// beside the store. Progress handlers, tags and lifetimes do not apply to outbox items.
    /// - Parameters:
    ///   - convertible: The request (or endpoint) to send.
    ///   - orderingGroup: Items with the same group are sent one at a time in the order accepted
    ///     (a conversation's messages); nil sends this item independently.
    ///   - id: The item's id, chosen by the app and saved with its own record before enqueueing
    ///     (a kill between the two then loses no link); an id already kept returns that item
    ///     without storing another. Default nil: a new random id.
    /// - Returns: The item's id, to keep beside your own record of the action.
    /// - Throws: `OutboxError`: a limit reached, a request that cannot be built, a store that
    ///   failed, or a closed outbox. Nothing is stored then.
    ///
    /// It returns once the item is on disk, so it blocks its thread for a disk write (flushed by
    /// default: a fraction of a millisecond; see `OutboxConfiguration.flushesEachWrite`).
    @discardableResult
    public func enqueue<Value>(
        _ convertible: some RequestConvertible<Value>, orderingGroup: String? = nil, id: OutboxItem.ID? = nil
    ) throws(OutboxError) -> OutboxItem.ID {
        if let id, state.withLock({ $0.seqByID[id.rawValue] != nil }) { return id }
        let request = convertible.makeRequest()
        let built: OutboxRequest.Built
        do { built = try OutboxRequest.build(request, client: client, temporaryPath: temporaryPath) } catch { throw .invalidRequest(error) }
        let chosen = id != nil
        let rawID = id?.rawValue ?? Self.randomID()
        // A body file is named by the outbox, whatever the id looks like.
        let bodyFile = built.temporaryFile == nil ? nil : Self.randomID()
        var record = OutboxStore.Record(
            id: rawID, orderingGroup: orderingGroup, apiGroup: request.group?.name, method: built.method.rawValue,
            url: built.url.absoluteString, headers: built.headers, bodyFile: bodyFile,
            bodySize: built.bodySize, idempotencyKey: Self.randomID(), created: Self.milliseconds(Date()))
        let original = OutboxRequest.Original(group: request.group, retryPolicy: request.retryPolicy)
        // Whether a send should start now; nil: the chosen id was kept already.
        let result: Result<Bool?, OutboxError> = storage.withLock { box in
            guard let box else { return .failure(.closed) }
            // Checked again where items are inserted: two enqueues of one chosen id store one item.
            if chosen, state.withLock({ $0.seqByID[rawID] != nil }) { return .success(nil) }
            if let limit = state.withLock({ $0.limitReached(adding: record.bodySize, configuration) }) {
                return .failure(.limitReached(limit))
            }
            do throws(CacheError) {
                if let file = built.temporaryFile, let bodyFile { try box.store.adoptBodyFile(temporaryName: file, as: bodyFile) }
                record.seq = try box.store.insert(record, body: built.body)
            } catch {
                if let bodyFile { try? FileManager.default.removeItem(atPath: bodiesPath + "/" + bodyFile) }
                return .failure(.storage(error))
            }
            let (item, pendingCount, pumps) = state.withLock { state in
                state.add(record, original: original)
                let pumps = !state.isOffline && state.sending.count < configuration.maximumConcurrentSends && state.claimPump()
                return (state.item(record), state.pendingCount, pumps)
            }
            hub.publish([.enqueued(item)], pendingCount: pendingCount)
            return .success(pumps)
        }
        switch result {
        case .success(let pumps?):
            if pumps { work.async { [weak self] in self?.pump() } }
            return OutboxItem.ID(rawID)
        case .success(nil):
            if let file = built.temporaryFile { try? FileManager.default.removeItem(atPath: temporaryPath + "/" + file) }
            return OutboxItem.ID(rawID)
        case .failure(let error):
            if let file = built.temporaryFile { try? FileManager.default.removeItem(atPath: temporaryPath + "/" + file) }
            throw error
        }
    }

    /// Waits until no item is pending: each one delivered, failed for good or removed (items
    /// enqueued meanwhile too). Returns at once when none is, and when the outbox closes or the
    /// waiting task is cancelled.
    public func drained() async {
        let stream = hub.stream(takesBacklog: false)
        guard pendingCount > 0 else { return }
        for await _ in stream where pendingCount == 0 { return }
    }

    /// Every item kept: waiting, sending, failed, and delivered within `keepsDeliveredFor`, in
    /// the order they were accepted.
    public var items: [OutboxItem] {
        let records = state.withLock { $0.records.values.sorted { $0.seq < $1.seq } }
        let answers =
            records.contains { $0.state == .delivered } ? storage.withLock { box in (try? box?.store.deliveredAnswers()) ?? [:] } : [:]
        return state.withLock { state in
            records.map { record in
                var record = record
                if record.state == .delivered { record.resultBody = answers[record.seq] }
                return state.item(record)
            }
        }
    }

    /// The item with `id`, if it is kept.
    public func item(_ id: OutboxItem.ID) -> OutboxItem? {
        guard var record = state.withLock({ state in state.seq(of: id).flatMap { state.records[$0] } }) else { return nil }
        if record.state == .delivered { record.resultBody = storage.withLock { box in (try? box?.store.answer(of: record.seq)) ?? nil } }
        return state.withLock { $0.item(record) }
    }

    /// How many items are still to be sent (queued or sending): a badge's number.
    public var pendingCount: Int { state.withLock { $0.pendingCount } }

    /// What happens to items from now on, in order. The first stream made also receives what
    /// happened before anyone listened (items of an earlier run replayed at launch). Ends when
    /// the outbox closes.
    public var events: AsyncStream<OutboxEvent> { hub.stream(takesBacklog: true) }

    /// The number of items still to be sent now, then each time it changes.
    public var pendingCounts: AsyncStream<Int> { hub.pendingCounts() }

    /// Receives the events on the client's callback queue; held weakly. The first delegate set
    /// also receives what happened before anyone listened.
    public var delegate: (any OutboxDelegate)? {
        get { hub.delegate }
        set { hub.delegate = newValue }
    }

    /// Waits until the item is delivered, failed or cancelled, and returns it (nil when it was
    /// cancelled, is unknown, or the outbox closed first).
    public func outcome(of id: OutboxItem.ID) async -> OutboxItem? {
        let stream = hub.stream(takesBacklog: false)
        guard let current = item(id) else { return nil }
        guard current.isPending else { return current }
        for await event in stream {
            switch event {
            case .delivered(let item) where item.id == id, .failed(let item) where item.id == id: return item
            case .removed(let removed) where removed == id: return nil
            default: continue
            }
        }
        return item(id).flatMap { $0.isPending ? nil : $0 }
    }

    /// Removes an item: a queued one is never sent, a failed or delivered one is forgotten. One
    /// being sent is cancelled, but it may already have reached the server.
    /// - Returns: Whether the item was kept (false once the outbox is closed).
    @discardableResult
    public func cancel(_ id: OutboxItem.ID) -> Bool {
        let (found, handle) = storage.withLock { box -> (Bool, RequestHandle?) in
            guard let box, let removed = state.withLock({ $0.remove(id) }) else { return (false, nil) }
            try? box.store.apply(updated: [], removed: [removed.record])
            hub.publish([.removed(id)], pendingCount: state.withLock { $0.pendingCount })
            return (true, removed.handle)
        }
        handle?.cancel()
        return found
    }

    /// Sends a failed item again (its age limit counts from now).
    /// - Returns: False when the item is unknown or has not failed, or the outbox is closed.
    @discardableResult
    public func retry(_ id: OutboxItem.ID) -> Bool {
        let found = storage.withLock { box -> Bool in
            guard let box else { return false }
            let requeued = state.withLock { state in
                state.requeue(id, now: Self.milliseconds(Date())).map { ($0, state.item($0), state.pendingCount) }
            }
            guard let (record, item, pendingCount) = requeued else { return false }
            try? box.store.apply(updated: [record], removed: [])
            hub.publish([.willRetry(item, after: 0)], pendingCount: pendingCount)
            return true
        }
        if found { schedulePump() }
        return found
    }

    /// Sends every queued item now, without waiting for its backoff to pass (a "sync now" button).
    public func replay() {
        state.withLock { $0.dueAt.removeAll() }
        schedulePump()
    }

    /// Closes the outbox: sends in flight are cancelled (their items stay queued for the next
    /// open), streams end, the store closes. Later calls throw `OutboxError.closed`. Idempotent.
    public func close() {
        // Outcomes not written yet are written first; a send's answer that arrives later is not.
        writeOutcomes()
        let wasOpen = storage.withLock { box in
            defer { box = nil }
            return box != nil
        }
        guard wasOpen else { return }
        reading.withLock { $0 = nil }
        let handles = state.withLock { state in
            state.isClosed = true
            return Array(state.handles.values)
        }
        networkToken.withLock {
            $0?.cancel()
            $0 = nil
        }
        handles.forEach { $0.cancel() }
        Self.openDirectories.withLock { _ = $0.remove(directory.path) }
        hub.finish()
    }

    /// A random (version 4) UUID, lowercased, from the system's generator: Foundation's `UUID()`
    /// opens and reads `/dev/urandom` for each one on Linux, a tenth of an enqueue.
    static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = (generator.next() as UInt64) & ~0xF000 | 0x4000
        let low = (generator.next() as UInt64) & 0x3FFF_FFFF_FFFF_FFFF | 0x8000_0000_0000_0000
        let b = withUnsafeBytes(of: (high.bigEndian, low.bigEndian)) { Array($0) }
        let uuid = UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
        return uuid.uuidString.lowercased()
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded()) }
}
