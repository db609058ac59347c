import Foundation

/// The state machine behind one request: created → running → completing → finished, every
/// transition under one lock, so that exactly one terminal outcome is delivered whatever races
/// between the response, a timeout and the cancellation APIs:
/// - cancellation and the deadline finish the request at once and deliver their error;
/// - a response finishes it only when its callback actually runs, so a cancellation that comes
///   while the response is being decoded or queued still wins, and no success or failure ever
///   arrives after a cancel call returns.
/// `RequestHandle` is its public face; the client's registry, the transport and the deadline
/// scheduler hold the core, never the handle, so a handle can be released while its request runs.
final class RequestCore: Sendable {
    /// How a terminal result gets the right to be delivered.
    enum Claim {
        /// Already claimed by the caller (cancel, timeout); deliver on the callback queue.
        case claimed
        /// Claim when the callback runs; drop it if something else finished the request first.
        case onDelivery
    }

    /// Receives the one terminal outcome of the transport (or the error that ended it early).
    typealias Sink = @Sendable (Result<RawResponse, TernError>, Claim) -> Void

    private struct State: Sendable {
        var phase: RequestHandle.Phase = .created
        var cancellation: TernError.CancellationReason?
        var insideSend = true
        var sink: Sink?
        var transportTask: (any TransportTask)?
        var deadline: TimeInterval?
        var response: HTTPURLResponse?
        var body = Data()
        var onFinished: (@Sendable (RequestCore) -> Void)?
    }

    /// A number unique within the process, in creation order.
    let id: UInt64
    let method: HTTPMethod
    let url: URL?
    let tags: Set<String>
    let lifetime: Lifetime
    /// Whether a cancellation delivers `TernError.cancelled` (false: no callback at all).
    let reportsCancellation: Bool
    /// Method + canonical URL + body, for repeat strategies; nil when the strategy is `.allow`.
    let identity: RequestIdentity?
    /// Delivers upload and download progress, when the request has a progress handler.
    let progress: ProgressReporter?
    private let state = Locked(State())
    /// The public handle, weakly: for `.handleReleased` and `.detached` it is the caller's to keep.
    private let weakHandle = WeakHandle()

    private static let counter = Locked<UInt64>(0)

    init(method: HTTPMethod, url: URL?, tags: Set<String> = [], lifetime: Lifetime = .untilFinished,
         reportsCancellation: Bool = true, identity: RequestIdentity? = nil, progress: ProgressReporter? = nil) {
        self.id = Self.counter.withLock { $0 += 1; return $0 }
        self.method = method
        self.url = url
        self.tags = tags
        self.lifetime = lifetime
        self.reportsCancellation = reportsCancellation
        self.identity = identity
        self.progress = progress
    }

    /// Creates the public handle. The core holds it weakly; the pipeline's sink keeps it alive
    /// until delivery when the lifetime says the engine owns it (`.untilFinished`, `.owner`).
    func makeHandle() -> RequestHandle {
        let handle = RequestHandle(core: self)
        weakHandle.handle = handle
        return handle
    }

    /// Whether the engine keeps the handle alive until the result is delivered.
    var retainsHandle: Bool { lifetime.kind == .untilFinished || lifetime.kind == .owner }

    /// The public handle, if it is still alive.
    var handle: RequestHandle? { weakHandle.handle }

    /// Whether anyone still listens for the result: always, except for a `.detached` request
    /// whose handle has been released.
    var isListenedTo: Bool { lifetime.kind != .detached || weakHandle.handle != nil }

    var phase: RequestHandle.Phase { state.withLock { $0.phase } }
    var cancellationReason: TernError.CancellationReason? { state.withLock { $0.cancellation } }

    /// Runs once, right after the request reaches `.finished` (the registry removes it there).
    func setOnFinished(_ body: @escaping @Sendable (RequestCore) -> Void) {
        let alreadyFinished = state.withLock { state -> Bool in
            guard state.phase != .finished else { return true }
            state.onFinished = body
            return false
        }
        if alreadyFinished { body(self) }
    }

    /// Cancels the request for `reason`: it ends with `TernError.cancelled(reason)`, delivered
    /// unless cancellation is silent for it (or `silently` is set). Idempotent.
    func cancel(_ reason: TernError.CancellationReason, silently: Bool = false) {
        guard let sink = terminate(onlyIfRunning: false, cancellation: reason) else { return }
        if reportsCancellation && !silently { sink(.failure(.cancelled(reason)), .claimed) }
    }

    // MARK: - Engine side

    /// Moves to `.running` with the sink that will receive the outcome.
    func begin(sink: @escaping Sink) {
        state.withLock {
            $0.sink = sink
            $0.phase = .running
        }
    }

    /// Whether `send` is still running for this request: a result produced before it returns
    /// (a synchronous transport, an early failure) must be delivered asynchronously.
    var isInsideSend: Bool { state.withLock { $0.insideSend } }

    /// Marks the end of `send`; callbacks may run inline from now on.
    func markSent() { state.withLock { $0.insideSend = false } }

    /// Keeps the transport's task so `cancel()` can stop it; cancels it if the request already ended.
    func attach(_ task: any TransportTask) {
        let alreadyOver = state.withLock { state -> Bool in
            guard state.phase == .running else { return true }
            state.transportTask = task
            return false
        }
        if alreadyOver { task.cancel() }
    }

    /// Arms the deadline; when it passes while the request is still running, the request ends
    /// with `TernError.timedOut` and its transport task is cancelled.
    func startDeadline(after seconds: TimeInterval) {
        guard seconds.isFinite, seconds > 0 else { return }
        let stillRunning = state.withLock { state -> Bool in
            guard state.phase == .running else { return false }
            state.deadline = seconds
            return true
        }
        if stillRunning { DeadlineScheduler.shared.add(self, at: .now() + seconds) }
    }

    /// Called by the scheduler when the deadline has passed.
    func deadlinePassed() {
        guard let (sink, seconds) = terminate(onlyIfRunning: true, cancellation: nil, returningDeadline: true),
              let seconds else { return }
        sink(.failure(.timedOut(after: seconds)), .claimed)
    }

    /// Feeds one transport event into the state machine.
    func receive(_ event: TransportEvent, mapError: (URLError) -> TernError) {
        switch event {
        case .response(let response):
            let running = state.withLock {
                guard $0.phase == .running else { return false }
                $0.response = response
                $0.body = Data()
                return true
            }
            if running { progress?.responseStarted(response) }
        case .data(let chunk):
            let running = state.withLock {
                guard $0.phase == .running else { return false }
                // A buffered transport hands over the whole body at once: keep it, do not copy it.
                if $0.body.isEmpty { $0.body = chunk } else { $0.body.append(chunk) }
                return true
            }
            if running { progress?.received(chunk.count) }
        case .sentBytes(let total, let expected):
            progress?.sent(total, expected: expected)
        case .completed(let error):
            let taken = state.withLock { state -> (Sink, HTTPURLResponse?, Data, Bool)? in
                guard state.phase == .running, let sink = state.sink else { return nil }
                state.phase = .completing
                defer { state.response = nil; state.body = Data(); state.deadline = nil; state.transportTask = nil }
                return (sink, state.response, state.body, state.deadline != nil)
            }
            guard let (sink, response, body, hadDeadline) = taken else { return }
            if hadDeadline { DeadlineScheduler.shared.remove(id) }
            if let error {
                sink(.failure(mapError(error)), .onDelivery)
            } else if let response {
                sink(.success(RawResponse(response: response, data: body)), .onDelivery)
            } else {
                sink(.failure(.transport(URLError(.badServerResponse))), .onDelivery)
            }
        }
    }

    /// Ends a running request with an outcome that did not come from the transport (a cache hit,
    /// a cache miss): delivered like a transport's, unless something finished the request first.
    func finish(with outcome: Result<RawResponse, TernError>) {
        let taken = state.withLock { state -> (Sink, Bool)? in
            guard state.phase == .running, let sink = state.sink else { return nil }
            state.phase = .completing
            defer { state.response = nil; state.body = Data(); state.deadline = nil; state.transportTask = nil }
            return (sink, state.deadline != nil)
        }
        guard let (sink, hadDeadline) = taken else { return }
        if hadDeadline { DeadlineScheduler.shared.remove(id) }
        sink(outcome, .onDelivery)
    }

    /// Claims the right to deliver a transport outcome: true once, and only if nothing else
    /// (cancel, timeout) finished the request first.
    func claim() -> Bool {
        let finished = state.withLock { state -> ((@Sendable (RequestCore) -> Void)?, Sink?)? in
            guard state.phase == .completing else { return nil }
            state.phase = .finished
            defer { state.onFinished = nil; state.sink = nil }
            return (state.onFinished, state.sink)
        }
        guard let (onFinished, sink) = finished else { return false }
        onFinished?(self)
        _ = sink  // released here, outside the lock: it may hold the last reference to the handle
        return true
    }

    /// Finishes the request early, cancelling its transport task and deadline.
    /// - Returns: The sink to deliver the terminal error to, or nil if the request had already
    ///   finished (or, with `onlyIfRunning`, was no longer running).
    func terminate(onlyIfRunning: Bool, cancellation: TernError.CancellationReason?) -> Sink? {
        terminate(onlyIfRunning: onlyIfRunning, cancellation: cancellation, returningDeadline: false)?.0
    }

    private func terminate(onlyIfRunning: Bool, cancellation: TernError.CancellationReason?,
                           returningDeadline: Bool) -> (Sink, TimeInterval?)? {
        typealias Taken = (Sink?, (any TransportTask)?, TimeInterval?, (@Sendable (RequestCore) -> Void)?)
        let taken = state.withLock { state -> Taken? in
            guard state.phase != .finished, !onlyIfRunning || state.phase == .running else { return nil }
            state.phase = .finished
            state.cancellation = cancellation
            defer {
                state.sink = nil; state.transportTask = nil; state.deadline = nil; state.body = Data()
                state.onFinished = nil
            }
            return (state.sink, state.transportTask, state.deadline, state.onFinished)
        }
        guard let (sink, task, deadline, onFinished) = taken else { return nil }
        progress?.stop()
        if deadline != nil { DeadlineScheduler.shared.remove(id) }
        task?.cancel()
        onFinished?(self)
        return sink.map { ($0, deadline) }
    }
}

/// The public handle, held weakly by its core.
// Sendable: `handle` is written once, in `makeHandle()`, before the core is shared with any
// other thread; weak loads are atomic.
private final class WeakHandle: @unchecked Sendable {
    weak var handle: RequestHandle?
}

/// What the transport (or the cache) delivered for a request: the final response and its whole body.
struct RawResponse: Sendable {
    let response: HTTPURLResponse
    let data: Data
    var source: ResponseSource = .network
}
