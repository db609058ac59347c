import Foundation

/// One request started by a `Client`: what it is, where it stands, and the way to cancel it.
///
/// Every `send` returns one. Its life is a small state machine — created → running →
/// completing → finished — whose transitions all happen under one lock, so that exactly one
/// terminal callback is delivered whatever races between the response, a timeout and `cancel()`:
/// - `cancel()` and the timeout finish the request at once and deliver their error;
/// - a response finishes it only when its callback actually runs, so a `cancel()` that comes
///   while the response is being decoded or queued still wins, and no success or failure ever
///   arrives after `cancel()` returns.
/// Thread safety: safe to use from any thread.
public final class RequestHandle: Sendable, CustomStringConvertible {
    /// Where a request stands.
    public enum Phase: Sendable, Equatable {
        /// Built, not yet handed to the transport.
        case created
        /// In the transport.
        case running
        /// The transport is done; the result is being decoded or waiting for its callback.
        case completing
        /// Its one terminal callback has been delivered or claimed.
        case finished
    }

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
        var phase: Phase = .created
        var wasCancelled = false
        var insideSend = true
        var sink: Sink?
        var transportTask: (any TransportTask)?
        var deadline: TimeInterval?
        var response: HTTPURLResponse?
        var body = Data()
    }

    /// A number unique within the process, in creation order.
    public let id: UInt64
    /// The request's method.
    public let method: HTTPMethod
    /// The request's full URL, or nil when it could not be built.
    public let url: URL?
    private let state = Locked(State())

    private static let counter = Locked<UInt64>(0)

    init(method: HTTPMethod, url: URL?) {
        self.id = Self.counter.withLock { $0 += 1; return $0 }
        self.method = method
        self.url = url
    }

    /// Where the request stands now.
    public var phase: Phase { state.withLock { $0.phase } }
    /// Whether the request ended because it was cancelled through this handle (or its `Task`).
    public var isCancelled: Bool { state.withLock { $0.wasCancelled } }
    /// Whether its terminal callback has been delivered or claimed.
    public var isFinished: Bool { phase == .finished }

    /// `GET https://… #id (phase)`.
    public var description: String { "\(method) \(url?.absoluteString ?? "(invalid URL)") #\(id) (\(phase))" }

    /// Cancels the request. Idempotent; a no-op once it has finished.
    ///
    /// Unless it had already finished, the request ends with `TernError.cancelled(.explicit)`:
    /// its callback runs on its callback queue (at once when that is the main queue and you are
    /// on the main thread), and no success or failure follows.
    public func cancel() {
        guard let sink = terminate(onlyIfRunning: false, markCancelled: true) else { return }
        sink(.failure(.cancelled(.explicit)), .claimed)
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
        guard let (sink, seconds) = terminate(onlyIfRunning: true, markCancelled: false, returningDeadline: true),
              let seconds else { return }
        sink(.failure(.timedOut(after: seconds)), .claimed)
    }

    /// Feeds one transport event into the state machine.
    func receive(_ event: TransportEvent, mapError: (URLError) -> TernError) {
        switch event {
        case .response(let response):
            state.withLock {
                guard $0.phase == .running else { return }
                $0.response = response
                $0.body = Data()
            }
        case .data(let chunk):
            state.withLock {
                guard $0.phase == .running else { return }
                // A buffered transport hands over the whole body at once: keep it, do not copy it.
                if $0.body.isEmpty { $0.body = chunk } else { $0.body.append(chunk) }
            }
        case .sentBytes:
            break
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

    /// Claims the right to deliver a transport outcome: true once, and only if nothing else
    /// (cancel, timeout) finished the request first.
    func claim() -> Bool {
        state.withLock { state in
            guard state.phase == .completing else { return false }
            state.phase = .finished
            state.sink = nil
            return true
        }
    }

    /// Finishes the request early, cancelling its transport task and deadline.
    /// - Returns: The sink to deliver the terminal error to, or nil if the request had already
    ///   finished (or, with `onlyIfRunning`, was no longer running).
    func terminate(onlyIfRunning: Bool, markCancelled: Bool) -> Sink? {
        terminate(onlyIfRunning: onlyIfRunning, markCancelled: markCancelled, returningDeadline: false)?.0
    }

    private func terminate(onlyIfRunning: Bool, markCancelled: Bool, returningDeadline: Bool) -> (Sink, TimeInterval?)? {
        let taken = state.withLock { state -> (Sink?, (any TransportTask)?, TimeInterval?)? in
            guard state.phase != .finished, !onlyIfRunning || state.phase == .running else { return nil }
            state.phase = .finished
            state.wasCancelled = markCancelled
            defer { state.sink = nil; state.transportTask = nil; state.deadline = nil; state.body = Data() }
            return (state.sink, state.transportTask, state.deadline)
        }
        guard let (sink, task, deadline) = taken else { return nil }
        if deadline != nil { DeadlineScheduler.shared.remove(id) }
        task?.cancel()
        return sink.map { ($0, deadline) }
    }
}

/// What the transport delivered for a request: the final response and its whole body.
struct RawResponse: Sendable {
    let response: HTTPURLResponse
    let data: Data
}
