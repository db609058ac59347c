import Foundation

/// The default transport: one `URLSession` with one session-level delegate.
///
/// The delegate answers every authentication challenge (an unanswered 401 Basic hangs forever on
/// Linux) and, in `.streamed` mode, routes each task's response, data and completion events by
/// task identifier. After `invalidate()` it creates no more tasks (creating one on an invalidated
/// session crashes on Linux) and `start` returns nil.
/// Thread safety: safe to use from any thread.
public final class URLSessionTransport: Transport {
    /// How a response body reaches the client.
    public enum Delivery: Sendable, Equatable {
        /// Whole, once the response is complete, through the task's completion handler. The
        /// default: on Linux each delegate event costs a hop through the delegate
        /// `OperationQueue`, and this path saves two of them per request (see README, Performance).
        case buffered
        /// Chunk by chunk as it arrives, through the session delegate: for progress and streaming.
        case streamed
    }

    private let session: URLSession
    private let delegate: SessionDelegate
    private let delivery: Delivery
    private let isInvalidated = Locked(false)

    /// Creates a transport with its own session.
    /// - Parameters:
    ///   - configuration: The session configuration, used as given (set `urlCache = nil` yourself
    ///     if you build one by hand; `Client` does).
    ///   - credential: Answers HTTP Basic challenges; without it a 401 is delivered as a response.
    ///   - delivery: `.buffered` (default) or `.streamed`.
    public init(configuration: URLSessionConfiguration, credential: BasicCredential? = nil, delivery: Delivery = .buffered) {
        delegate = SessionDelegate(credential: credential)
        self.delivery = delivery
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "Tern.URLSessionTransport.delegate"
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        // The session retains its delegate until invalidated; let running tasks finish, then free both.
        session.finishTasksAndInvalidate()
    }

    /// Starts a data task for `request` in this transport's delivery mode; nil once invalidated.
    public func start(_ request: URLRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
        start(request, streaming: delivery == .streamed, events: events)
    }

    /// Starts a data task for `request`, streamed through the delegate when `streaming` is set
    /// (whatever the transport's delivery mode), else buffered; nil once invalidated.
    public func start(_ request: URLRequest, streaming: Bool, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
        var request = request
        request.timeoutInterval = Platform.sessionTimeout(forDeadline: request.timeoutInterval)
        let task: URLSessionDataTask? = isInvalidated.withLock { invalidated in
            // Creating the task under the lock `invalidate()` takes: no task on a dead session.
            guard !invalidated else { return nil }
            if streaming || delivery == .streamed {
                let task = session.dataTask(with: request)
                delegate.register(task.taskIdentifier, events: events)
                return task
            } else {
                let slot = TaskSlot()
                let task = session.dataTask(with: request) { [delegate] data, response, error in
                    let refusedChallenge = slot.task.map { delegate.unregisterBuffered($0) } ?? false
                    Self.deliver(data: data, response: refusedChallenge ? slot.task?.response : response,
                                 error: refusedChallenge ? nil : error, to: events)
                }
                slot.task = task
                delegate.registerBuffered(task.taskIdentifier)
                return task
            }
        }
        guard let task else { return nil }
        task.resume()
        return SessionTask(task: task)
    }

    /// Turns a completion handler's arguments into transport events.
    private static func deliver(data: Data?, response: URLResponse?, error: (any Error)?, to events: (TransportEvent) -> Void) {
        if let error {
            events(.completed(error as? URLError ?? URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error])))
            return
        }
        guard let http = response as? HTTPURLResponse else {
            events(.completed(URLError(.badServerResponse)))
            return
        }
        events(.response(http))
        if let data, !data.isEmpty { events(.data(data)) }
        events(.completed(nil))
    }

    /// Cancels all tasks and invalidates the session; later `start` calls return nil.
    public func invalidate() {
        let wasInvalidated = isInvalidated.withLock { invalidated in
            defer { invalidated = true }
            return invalidated
        }
        if !wasInvalidated { session.invalidateAndCancel() }
    }
}

/// A URLSession task behind the `TransportTask` seam.
private struct SessionTask: TransportTask {
    let task: URLSessionTask
    func cancel() { task.cancel() }
}

/// Lets a completion handler reach the task it belongs to.
// Sendable: written once, before the task is resumed; read only by its completion handler,
// which URLSession calls after `resume()`.
private final class TaskSlot: @unchecked Sendable {
    var task: URLSessionTask?
}
