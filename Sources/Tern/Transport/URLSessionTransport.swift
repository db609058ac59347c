import Foundation

/// The default transport on Apple platforms: one `URLSession` with one session-level delegate.
///
/// The delegate answers every authentication challenge (an unanswered 401 Basic hangs forever on
/// Linux), hands redirects back unfollowed (Tern follows them itself), is the only way a task is
/// cancelled (so a cancel never lands inside FoundationNetworking's redirect window, which crashes
/// on Linux), and, for streamed exchanges, routes each task's response, data and completion by
/// task identifier. After `invalidate()` it creates no more tasks (creating one on an invalidated
/// session crashes on Linux) and `start` returns nil.
///
/// On Linux tasks are created and resumed on a serial queue of the transport's, never on the
/// caller's thread: FoundationNetworking creates and resumes a task with a synchronous call onto
/// the session's work queue, which a cancelled large download or a gzip bomb still being inflated
/// keeps busy for seconds, so `start` (and a caller's `send`) would wait that long.
/// Thread safety: safe to use from any thread.
public final class URLSessionTransport: Transport {
    private let session: URLSession
    private let delegate: SessionDelegate
    private let delivery: Delivery
    private let delegateQueue: DelegateQueue
    private let isInvalidated = Locked(false)
    /// Where tasks are created and resumed, and the session invalidated, in order, where that can
    /// wait (`Platform.waitsToStartTasks`).
    private let starter = DispatchQueue(label: "Tern.URLSessionTransport.start", qos: .userInitiated)

    /// Creates a transport with its own session.
    /// - Parameters:
    ///   - configuration: The session configuration, used as given (set `urlCache = nil` yourself
    ///     if you build one by hand; `Client` does).
    ///   - credential: Answers HTTP Basic challenges; without it a 401 is delivered as a response.
    ///   - delivery: `.streamed` (default) or `.buffered`; exchanges that ask for streaming, or
    ///     write their body to a file, are streamed either way.
    ///   - pinning: Server keys or certificates to insist on, checked in the server-trust
    ///     challenge (Apple platforms; Linux sends no such challenge, so a `Client` refuses
    ///     pinning with this transport there).
    public convenience init(
        configuration: URLSessionConfiguration, credential: BasicCredential? = nil, delivery: Delivery = .streamed,
        pinning: ServerPinning = .none
    ) {
        self.init(configuration: configuration, credential: credential, delivery: delivery, pinning: pinning, sendsWireHeaders: false)
    }

    private init(
        configuration: URLSessionConfiguration, credential: BasicCredential?, delivery: Delivery, pinning: ServerPinning,
        sendsWireHeaders: Bool
    ) {
        self.sendsWireHeaders = sendsWireHeaders
        delegate = SessionDelegate(credential: credential, pinning: pinning)
        self.delivery = delivery
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "Tern.URLSessionTransport.delegate"
        delegateQueue = DelegateQueue(queue)
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    /// The transport a client gets on Apple platforms (and on Linux with
    /// `TERN_TRANSPORT=urlsession`), built from `settings`: their session configuration
    /// (`makeSessionConfiguration(idleTimeout:)`), credential, delivery and pins.
    public static func make(settings: TransportSettings, idleTimeout: TimeInterval = 60) -> URLSessionTransport {
        // Its session configuration carries the wire headers.
        URLSessionTransport(
            configuration: settings.makeSessionConfiguration(idleTimeout: idleTimeout), credential: settings.credential,
            delivery: settings.urlSession.delivery, pinning: settings.tls.pinning, sendsWireHeaders: true)
    }

    /// True when made by `make(settings:)`, whose session configuration carries the client's
    /// wire headers; false for a session configuration of your own (the client adds them).
    public let sendsWireHeaders: Bool

    deinit {
        // The session retains its delegate until invalidated; let running tasks finish, then free both.
        session.finishTasksAndInvalidate()
    }

    /// Starts a data (or upload-from-file) task for `request`; nil once invalidated. Returns at
    /// once: on Linux the task is created and resumed on the transport's queue.
    public func start(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
        let handle = SessionTask(delegate: delegate, queue: delegateQueue)
        return begin(request, events: events, as: handle) ? handle : nil
    }

    /// Has the task of `request` made for `handle`; false once invalidated. No task is ever made
    /// on an invalidated session (that crashes): where tasks are made on `starter`, invalidation
    /// runs there too, after them; elsewhere they are made under the lock `invalidate()` takes.
    private func begin(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void, as handle: SessionTask) -> Bool {
        guard Platform.waitsToStartTasks else {
            return isInvalidated.withLock { invalidated in
                if !invalidated { launch(request, events: events, as: handle) }
                return !invalidated
            }
        }
        guard !isInvalidated.withLock({ $0 }) else { return false }
        starter.async { [self] in
            guard !isInvalidated.withLock({ $0 }) else { return events(.completed(URLError(.cancelled))) }
            launch(request, events: events, as: handle)
        }
        return true
    }

    /// Creates, registers and resumes the task of `request`. An exchange cancelled before then
    /// ends with `URLError(.cancelled)` and makes no request.
    private func launch(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void, as handle: SessionTask) {
        guard !handle.isCancelled else { return events(.completed(URLError(.cancelled))) }
        var urlRequest = request.urlRequest
        urlRequest.timeoutInterval = Platform.sessionTimeout(forDeadline: urlRequest.timeoutInterval)
        var streamed = request.streamsBody || delivery == .streamed
        if case .file = request.destination { streamed = true }
        let task: URLSessionTask
        if streamed {
            task = makeTask(urlRequest, body: request.body, completion: nil)
        } else {
            let slot = TaskSlot()
            let limit: Int? = if case .memory(let limit) = request.destination { limit } else { nil }
            task = makeTask(urlRequest, body: request.body) { [weak self, delegate] data, response, error in
                let (refusedChallenge, failure) = slot.task.map { delegate.unregisterBuffered($0) } ?? (false, nil)
                if refusedChallenge, Self.isIdempotent(request.urlRequest), !Self.isProduced(request.body), let self {
                    // URLSession drops the body of a buffered task whose challenge was
                    // refused; the same request, streamed, keeps it (refused the same way).
                    var again = request
                    again.streamsBody = true
                    if self.begin(again, events: events, as: handle) { return }
                }
                Self.deliver(
                    data: data, response: refusedChallenge ? slot.task?.response : response,
                    error: refusedChallenge ? nil : failure ?? error, limit: limit, to: events)
            }
            slot.task = task
        }
        delegate.register(task, for: request, isStreamed: streamed, events: events)
        switch handle.attach(task) {
        case .run: task.resume()
        case .held: break  // suspended meanwhile: its `resume()` starts it
        case .cancelled: delegate.cancel(task)  // ends it without a request
        }
    }

    private typealias Completion = @Sendable (Data?, URLResponse?, (any Error)?) -> Void

    private func makeTask(_ request: URLRequest, body: TransportRequest.Body, completion: Completion?) -> URLSessionTask {
        if case .file(let file) = body {
            return completion.map { session.uploadTask(with: request, fromFile: file, completionHandler: $0) }
                ?? session.uploadTask(with: request, fromFile: file)
        }
        var request = request
        switch body {
        case .data(let data): request.httpBody = data
        case .stream(let stream):
            request.httpBodyStream = Platform.bodyInputStream(for: stream)
            if !Platform.sendsContentLengthOfStreams { request.setValue(nil, forHTTPHeaderField: "Content-Length") }
        case .none, .file: break
        }
        return completion.map { session.dataTask(with: request, completionHandler: $0) } ?? session.dataTask(with: request)
    }

    /// Whether `body` is produced while it is sent (it cannot be sent twice).
    private static func isProduced(_ body: TransportRequest.Body) -> Bool {
        if case .stream = body { return true }
        return false
    }

    /// Whether sending `request` twice is harmless (RFC 9110 idempotent methods).
    private static func isIdempotent(_ request: URLRequest) -> Bool {
        ["GET", "HEAD", "PUT", "DELETE", "OPTIONS"].contains(request.httpMethod?.uppercased() ?? "GET")
    }

    /// Turns a completion handler's arguments into transport events.
    private static func deliver(
        data: Data?, response: URLResponse?, error: (any Error)?, limit: Int?,
        to events: (TransportEvent) -> Void
    ) {
        if let error {
            events(.completed(Platform.normalized(error as? URLError ?? URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error]))))
            return
        }
        guard let http = response as? HTTPURLResponse else {
            events(.completed(URLError(.badServerResponse)))
            return
        }
        if let framing = ResponseFraming.error(for: http) { return events(.completed(framing)) }
        if let limit, let data, data.count > limit { return events(.completed(URLError(.dataLengthExceedsMaximum))) }
        events(.head(ResponseHead(http)))
        if let data, !data.isEmpty { events(.data(data)) }
        events(.completed(nil))
    }

    /// True on Apple platforms; on Linux a resumed task starts its request over, so it never pauses.
    public var pausesExchanges: Bool { Platform.pausesTasks }

    /// Cancels all tasks and invalidates the session; later `start` calls return nil.
    public func invalidate() {
        let wasInvalidated = isInvalidated.withLock { invalidated in
            defer { invalidated = true }
            return invalidated
        }
        guard !wasInvalidated else { return }
        // Cancelled one by one through the delegate (never inside a redirect answer), then the
        // session is let go once they have ended; after the tasks already being made.
        let end = { @Sendable [delegate, session] in
            delegate.cancelAll()
            session.finishTasksAndInvalidate()
        }
        if Platform.waitsToStartTasks { starter.async(execute: end) } else { end() }
    }

    /// Whether `invalidate()` has run: no new work then.
    var hasBeenInvalidated: Bool { isInvalidated.withLock { $0 } }

    #if canImport(Darwin)
    /// A stream task to `url`'s host and port on this transport's session, for a WebSocket's
    /// connection: its challenges come to the session's delegate (pins included) and an
    /// invalidation cancels it; nil once invalidated.
    func makeStreamTask(to url: URL) -> URLSessionStreamTask? {
        guard let host = url.host else { return nil }
        let port = url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80)
        return isInvalidated.withLock { invalidated in
            guard !invalidated else { return nil }
            let task = session.streamTask(withHostName: host, port: port)
            delegate.register(task, for: TransportRequest(URLRequest(url: url)), isStreamed: false) { _ in }
            return task
        }
    }

    /// Cancels and forgets a stream task `makeStreamTask` made; returns the pin failure its
    /// server was refused for, if any.
    func endStreamTask(_ task: URLSessionStreamTask) -> URLError? {
        let failure = delegate.unregisterBuffered(task).failure
        delegate.cancel(task)
        return failure
    }
    #endif
}

/// A URLSession task behind the `TransportTask` seam, made on the transport's queue after
/// `start` returned (a restarted exchange replaces it); cancelled through the delegate.
// Sendable: `state` is behind its lock; the rest is immutable.
private final class SessionTask: TransportTask, @unchecked Sendable {
    private struct State {
        var task: URLSessionTask?
        var isCancelled = false
        var isSuspended = false
    }

    private let state = Locked(State())
    let delegate: SessionDelegate
    let queue: DelegateQueue

    init(delegate: SessionDelegate, queue: DelegateQueue) {
        self.delegate = delegate
        self.queue = queue
    }

    /// Whether `cancel()` was called.
    var isCancelled: Bool { state.withLock { $0.isCancelled } }

    /// What becomes of a task just made for the exchange.
    enum Start { case run, held, cancelled }

    /// Takes `task` as the exchange's task: it runs, waits for `resume()` (the exchange was
    /// suspended meanwhile), or is to be cancelled (the exchange was).
    func attach(_ task: URLSessionTask) -> Start {
        state.withLock { state in
            state.task = task
            return state.isCancelled ? .cancelled : state.isSuspended ? .held : .run
        }
    }

    func cancel() {
        let task = state.withLock { state -> URLSessionTask? in
            state.isCancelled = true
            return state.task
        }
        if let task { delegate.cancel(task) }
    }

    // Not on Linux, where a resumed task starts its request over (see `Platform.pausesTasks`).
    func suspend() {
        if Platform.pausesTasks { setSuspended(true)?.suspend() }
    }

    func resume() {
        if Platform.pausesTasks { setSuspended(false)?.resume() }
    }

    /// Records whether the exchange is suspended; returns its task, if made.
    private func setSuspended(_ suspended: Bool) -> URLSessionTask? {
        state.withLock { state in
            state.isSuspended = suspended
            return state.task
        }
    }

    /// Behind the work URLSession has queued on Dispatch's global threads (reading what arrived),
    /// then behind the delegate callbacks that work queued: on Linux both share the few threads
    /// of Swift's tasks, which a busy process can hold for longer than an idle timeout.
    func afterPendingEvents(_ body: @escaping @Sendable () -> Void) {
        let queue = queue
        DispatchQueue.global().async { queue.operations.addOperation(body) }
    }
}

/// The session's delegate queue, where every event of a task is delivered.
// Sendable: OperationQueue is thread-safe; this only adds operations to it.
private final class DelegateQueue: @unchecked Sendable {
    let operations: OperationQueue
    init(_ operations: OperationQueue) { self.operations = operations }
}

/// Lets a completion handler reach the task it belongs to.
// Sendable: written once, before the task is resumed; read only by its completion handler,
// which URLSession calls after `resume()`.
private final class TaskSlot: @unchecked Sendable {
    var task: URLSessionTask?
}
