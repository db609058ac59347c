import Foundation

/// The one session-level delegate of a `URLSessionTransport`: answers authentication challenges
/// for every task and routes the events of `.streamed` tasks to their handlers by task identifier.
///
/// Per-task delegates are ignored on Linux, so everything goes through here. The delegate queue
/// is serial, so events of one task arrive in order. Authentication challenges are always
/// answered: an unanswered 401 Basic challenge hangs forever on Linux. Completion-handler tasks
/// get challenges (and redirects) here too, but no response or data events.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    private struct Route {
        let events: @Sendable (TransportEvent) -> Void
        var sawResponse = false
        var cancelledChallenge = false
    }

    private let routes = Locked<[Int: Route]>([:])
    private let credential: BasicCredential?

    init(credential: BasicCredential?) {
        self.credential = credential
    }

    func register(_ taskIdentifier: Int, events: @escaping @Sendable (TransportEvent) -> Void) {
        routes.withLock { $0[taskIdentifier] = Route(events: events) }
    }

    /// Registers a completion-handler (`.buffered`) task: only its challenges come here.
    func registerBuffered(_ taskIdentifier: Int) {
        routes.withLock { $0[taskIdentifier] = Route(events: { _ in }) }
    }

    /// Forgets a `.buffered` task; returns whether its challenge was refused, in which case the
    /// caller delivers the 401 as a normal response.
    func unregisterBuffered(_ task: URLSessionTask) -> Bool {
        routes.withLock { $0.removeValue(forKey: task.taskIdentifier)?.cancelledChallenge ?? false }
    }

    private func events(for task: URLSessionTask, sawResponse: Bool = false) -> (@Sendable (TransportEvent) -> Void)? {
        routes.withLock { routes in
            if sawResponse { routes[task.taskIdentifier]?.sawResponse = true }
            return routes[task.taskIdentifier]?.events
        }
    }

    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        // Always .allow: Linux ignores any other disposition.
        completionHandler(.allow)
        guard let http = response as? HTTPURLResponse else { return }
        events(for: dataTask, sawResponse: true)?(.response(http))
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        events(for: dataTask)?(.data(data))
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        // Linux reports 0 for an unknown total, Apple platforms -1.
        events(for: task)?(.sentBytes(totalBytesSent, expected: totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard let route = routes.withLock({ $0.removeValue(forKey: task.taskIdentifier) }) else { return }
        if route.cancelledChallenge, let http = task.response as? HTTPURLResponse {
            // We refused the challenge: the caller gets the 401 as a normal response.
            if !route.sawResponse { route.events(.response(http)) }
            route.events(.completed(nil))
            return
        }
        guard let error else {
            route.events(.completed(nil))
            return
        }
        route.events(.completed(error as? URLError ?? URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error])))
    }

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let method = challenge.protectionSpace.authenticationMethod
        if Platform.isServerTrustChallenge(method) {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        if let credential, challenge.previousFailureCount == 0,
           method == NSURLAuthenticationMethodHTTPBasic || method == NSURLAuthenticationMethodDefault {
            completionHandler(.useCredential, URLCredential(user: credential.user, password: credential.password, persistence: .forSession))
            return
        }
        routes.withLock { $0[task.taskIdentifier]?.cancelledChallenge = true }
        completionHandler(.cancelAuthenticationChallenge, nil)
    }
}
