import Foundation

/// The default transport: one `URLSession` with one session-level delegate.
///
/// Requests run as data tasks whose events the delegate routes by task identifier. After
/// `invalidate()` it creates no more tasks (creating one on an invalidated session crashes on
/// Linux) and `start` returns nil.
/// Thread safety: safe to use from any thread.
public final class URLSessionTransport: Transport {
    private let session: URLSession
    private let delegate: SessionDelegate
    private let isInvalidated = Locked(false)

    /// Creates a transport with its own session.
    /// - Parameters:
    ///   - configuration: The session configuration, used as given (set `urlCache = nil` yourself
    ///     if you build one by hand; `Client` does).
    ///   - credential: Answers HTTP Basic challenges; without it a 401 is delivered as a response.
    public init(configuration: URLSessionConfiguration, credential: BasicCredential? = nil) {
        delegate = SessionDelegate(credential: credential)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        queue.name = "Tern.URLSessionTransport.delegate"
        session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: queue)
    }

    deinit {
        // The session retains its delegate until invalidated; let running tasks finish, then free both.
        session.finishTasksAndInvalidate()
    }

    /// Starts a data task for `request`; nil once invalidated.
    public func start(_ request: URLRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
        var request = request
        request.timeoutInterval = Platform.sessionTimeout(forDeadline: request.timeoutInterval)
        let task: URLSessionDataTask? = isInvalidated.withLock { invalidated in
            // Creating the task under the lock `invalidate()` takes: no task on a dead session.
            guard !invalidated else { return nil }
            let task = session.dataTask(with: request)
            delegate.register(task.taskIdentifier, events: events)
            return task
        }
        guard let task else { return nil }
        task.resume()
        return SessionTask(task: task)
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
