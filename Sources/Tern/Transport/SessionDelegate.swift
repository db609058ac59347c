import Foundation

/// The one session-level delegate of a `URLSessionTransport`: answers authentication challenges
/// and redirects for every task, routes the events of streamed tasks to their handlers by task
/// identifier, and is the only way a task is ever cancelled.
///
/// Per-task delegates are ignored on Linux, so everything goes through here. The delegate queue
/// is serial, so events of one task arrive in order. Authentication challenges are always
/// answered: an unanswered 401 Basic challenge hangs forever on Linux. Completion-handler tasks
/// get challenges and redirects here too, but no response or data events. What each challenge
/// gets is decided per platform by `ChallengePolicy`.
///
/// Cancelling during a redirect: FoundationNetworking marks a task as waiting for the redirect
/// answer on the task's work queue, asks this delegate on the delegate queue, and handles the
/// answer back on the work queue, where it stops the process with a fatal error if a cancel ran
/// in between ("Received callback for HTTP redirection, but we're not waiting for it"). So a
/// cancel never reaches a task while its redirect answer is being given (it waits until the
/// answer has been queued, then follows it on the same work queue), and on Linux the redirect of
/// a task already cancelled is never answered (the cancel completes it).
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct Route {
        let task: URLSessionTask
        let events: @Sendable (TransportEvent) -> Void
        let isStreamed: Bool
        let followsRedirects: Bool
        let limit: Int?
        var file: ResponseFileWriter?
        var received = 0
        var sawResponse = false
        var cancelledChallenge = false
        var failure: URLError?
        var cancelRequested = false
        var isAnsweringRedirect = false
    }

    private let routes = Locked<[Int: Route]>([:])
    private let credential: BasicCredential?
    /// The server keys or certificates insisted on (Apple platforms; see `ServerTrust`).
    private let pinning: ServerPinning
    /// Checks the announced length of buffered tasks with a size limit while they run.
    private let watchdog: SendableTimer
    /// Whether the watchdog is armed (some buffered task with a limit is registered).
    private let watching = Locked(false)

    /// How often the announced length of buffered tasks is checked against their limit.
    static let watchInterval: DispatchTimeInterval = .milliseconds(50)

    init(credential: BasicCredential?, pinning: ServerPinning = .none) {
        self.credential = credential
        self.pinning = pinning
        watchdog = SendableTimer(source: DispatchSource.makeTimerSource(queue: DispatchQueue(label: "Tern.URLSessionTransport.watchdog")))
        super.init()
        watchdog.source.setEventHandler { [weak self] in self?.watch() }
        watchdog.source.schedule(deadline: .distantFuture)
        watchdog.source.resume()
    }

    deinit {
        watchdog.source.cancel()
    }

    /// Routes a task's events; `isStreamed` false: a completion-handler task, whose response and
    /// body come through its handler (only challenges and redirects come here).
    func register(
        _ task: URLSessionTask, for request: TransportRequest, isStreamed: Bool,
        events: @escaping @Sendable (TransportEvent) -> Void
    ) {
        var limit: Int?
        var file: ResponseFileWriter?
        switch request.destination {
        case .memory(let bytes): limit = bytes
        case .file(let url, let offset): file = ResponseFileWriter(url: url, offset: offset)
        }
        let route = Route(
            task: task, events: events, isStreamed: isStreamed, followsRedirects: request.followsRedirects, limit: limit, file: file)
        routes.withLock { $0[task.taskIdentifier] = route }
        if !isStreamed, limit != nil { startWatching() }
    }

    /// Forgets a completion-handler task: whether its challenge was refused (the caller then
    /// delivers the 401 as a normal response), and the failure it was cancelled for, if any.
    func unregisterBuffered(_ task: URLSessionTask) -> (refusedChallenge: Bool, failure: URLError?) {
        let route = routes.withLock { $0.removeValue(forKey: task.taskIdentifier) }
        return (route?.cancelledChallenge ?? false, route?.failure)
    }

    /// A completion handler hands over the body only at the end, so the limit of a buffered task
    /// is checked against the `Content-Length` its response announced, every `watchInterval`
    /// while it runs; a body that announces nothing is checked when complete. Armed only while
    /// such tasks exist: no timer on a client without limits or with streamed delivery.
    private func startWatching() {
        let arm = watching.withLock { watching -> Bool in
            defer { watching = true }
            return !watching
        }
        if arm { watchdog.source.schedule(deadline: .now() + Self.watchInterval, repeating: Self.watchInterval, leeway: .milliseconds(10)) }
    }

    private func watch() {
        let (watched, anyLeft) = routes.withLock { routes -> ([(URLSessionTask, Int)], Bool) in
            let watched = routes.values.compactMap { route in
                !route.isStreamed && !route.cancelRequested ? route.limit.map { (route.task, $0) } : nil
            }
            return (watched, !watched.isEmpty)
        }
        for (task, limit) in watched where task.countOfBytesExpectedToReceive > Int64(limit) {
            cancel(task, because: URLError(.dataLengthExceedsMaximum))
        }
        if !anyLeft {
            watching.withLock { $0 = false }
            watchdog.source.schedule(deadline: .distantFuture)
            // A task registered between the check and the disarm re-arms the timer itself.
            if routes.withLock({ $0.values.contains { !$0.isStreamed && $0.limit != nil } }) { startWatching() }
        }
    }

    /// Cancels `task`, unless its redirect answer is being given right now: then just after.
    /// Returns at once: `URLSessionTask.cancel()` runs on `cancelling`, because on Linux it can
    /// block its caller for seconds while the session's queue is busy (a fast large download).
    func cancel(_ task: URLSessionTask, because failure: URLError? = nil) {
        let cancelNow = routes.withLock { routes -> Bool in
            guard var route = routes[task.taskIdentifier] else { return true }
            route.cancelRequested = true
            if route.failure == nil { route.failure = failure }
            routes[task.taskIdentifier] = route
            return !route.isAnsweringRedirect
        }
        if cancelNow { Self.cancelling.async { task.cancel() } }
    }

    /// Where tasks are cancelled: never the caller's thread, one at a time.
    private static let cancelling = DispatchQueue(label: "Tern.URLSessionTransport.cancel", qos: .userInitiated)

    /// Ends a streamed task's exchange with `failure` now, then cancels the task: the exchange
    /// does not wait for `URLSessionTask.cancel()`, which on Linux can take seconds under load
    /// (and waits behind other cancels on `cancelling`). Called from a response or data event of
    /// the task, never during its redirect; its later events find no route and are dropped.
    private func end(_ task: URLSessionTask, with failure: URLError) {
        guard let route = routes.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        _ = route.file?.finish()
        route.events(.completed(failure))
        Self.cancelling.async { task.cancel() }
    }

    /// Cancels every task this delegate routes (the transport is being invalidated).
    func cancelAll() {
        routes.withLock { $0.values.map(\.task) }.forEach { cancel($0) }
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        let follows = routes.withLock { routes -> Bool? in
            guard var route = routes[task.taskIdentifier], !route.cancelRequested else { return nil }
            route.isAnsweringRedirect = true
            routes[task.taskIdentifier] = route
            return route.followsRedirects
        }
        // Cancelled already: its cancel completes the task; on Linux an answer now would be fatal.
        guard let follows else {
            if Platform.answersRedirectOfCancelledTask { completionHandler(nil) }
            return
        }
        completionHandler(follows ? request : nil)
        let cancelNow = routes.withLock { routes -> Bool in
            routes[task.taskIdentifier]?.isAnsweringRedirect = false
            return routes[task.taskIdentifier]?.cancelRequested == true
        }
        // The answer is queued on the task's work queue; a cancel queued now runs after it.
        if cancelNow { task.cancel() }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        // Always .allow: Linux ignores any other disposition.
        completionHandler(.allow)
        guard let http = response as? HTTPURLResponse else { return }
        let (route, tooLarge) = routes.withLock { routes -> (Route?, Bool) in
            routes[dataTask.taskIdentifier]?.sawResponse = true
            routes[dataTask.taskIdentifier]?.received = 0
            // A cancelled task opens no file: the request may already have removed its partial one.
            guard let route = routes[dataTask.taskIdentifier], route.isStreamed, !route.cancelRequested else { return (nil, false) }
            return (route, route.limit.map { http.expectedContentLength > Int64($0) } ?? false)
        }
        guard let route else { return }
        if let framing = ResponseFraming.error(for: http) { return end(dataTask, with: framing) }
        if tooLarge { return end(dataTask, with: URLError(.dataLengthExceedsMaximum)) }
        if let file = route.file, let error = file.begin(status: http.statusCode) { return end(dataTask, with: error) }
        route.events(.head(ResponseHead(http)))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let (route, tooLarge) = routes.withLock { routes -> (Route?, Bool) in
            guard var route = routes[dataTask.taskIdentifier], route.isStreamed, !route.cancelRequested else { return (nil, false) }
            route.received += data.count
            routes[dataTask.taskIdentifier] = route
            return (route, route.limit.map { route.received > $0 } ?? false)
        }
        guard let route else { return }
        if tooLarge { return end(dataTask, with: URLError(.dataLengthExceedsMaximum)) }
        if let error = route.file?.write(data) { return end(dataTask, with: error) }
        route.events(.data(data))
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        guard let route = routes.withLock({ $0[task.taskIdentifier] }), route.isStreamed else { return }
        // Linux reports 0 for an unknown total, Apple platforms -1.
        route.events(.sentBytes(totalBytesSent, expected: totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard
            let route = routes.withLock({ routes -> Route? in
                guard routes[task.taskIdentifier]?.isStreamed == true else { return nil }
                return routes.removeValue(forKey: task.taskIdentifier)
            })
        else { return }
        let closeError = route.file?.finish()
        if route.cancelledChallenge, let http = task.response as? HTTPURLResponse {
            // We refused the challenge: the caller gets the 401 as a normal response.
            if !route.sawResponse { route.events(.head(ResponseHead(http))) }
            route.events(.completed(nil))
            return
        }
        if let failure = route.failure { return route.events(.completed(failure)) }
        if error == nil, !route.sawResponse, let http = task.response as? HTTPURLResponse {
            // FoundationNetworking tells no delegate of a 301–308 it does not follow (no usable
            // `Location`) and keeps its body to itself: the head is all there is to deliver.
            route.events(.head(ResponseHead(http)))
        }
        guard let error else { return route.events(.completed(closeError)) }
        route.events(.completed(Platform.normalized(error as? URLError ?? URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error]))))
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #if canImport(Security)
        if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
            let trust = challenge.protectionSpace.serverTrust
        {
            let host = challenge.protectionSpace.host
            let pins = pinning.pins(for: host)
            if pins != .none {
                guard ServerTrust.satisfies(trust, pins: pins) else {
                    routes.withLock { $0[task.taskIdentifier]?.failure = TLSFailure.pinMismatch(host: host) }
                    return completionHandler(.cancelAuthenticationChallenge, nil)
                }
                return completionHandler(.useCredential, URLCredential(trust: trust))
            }
        }
        #endif
        switch ChallengePolicy.answer(ChallengePolicy.Challenge(challenge, hasCredential: credential != nil)) {
        case .useCredential:
            let credential = credential.map { URLCredential(user: $0.user, password: $0.password, persistence: .forSession) }
            completionHandler(.useCredential, credential)
        case .performDefaultHandling:
            completionHandler(.performDefaultHandling, nil)
        case .rejectProtectionSpace:
            completionHandler(.rejectProtectionSpace, nil)
        case .cancelAndDeliverResponse:
            routes.withLock { $0[task.taskIdentifier]?.cancelledChallenge = true }
            completionHandler(.cancelAuthenticationChallenge, nil)
        }
    }
}
