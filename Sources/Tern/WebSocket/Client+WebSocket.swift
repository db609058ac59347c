import Foundation

extension Client {
    /// Opens a WebSocket to `request`'s URL (a `Request` or an `Endpoint`): `ws://` or `wss://`
    /// absolute, or a path relative to the base URL (its `http` becomes `ws`, its `https` `wss`).
    /// The request's headers, query, API group, hooks and adapters apply as for any request, and
    /// so do its tags and lifetime; its body and response type do not. The socket connects at once; `messages`, `send` and
    /// `opened()` wait for it.
    ///
    /// ```swift
    /// let socket = client.webSocket(Request<Data>("live/prices"), options: WebSocketOptions(protocols: ["v2"]))
    /// try await socket.send("subscribe CNY")
    /// for try await message in socket.messages { print(message) }
    /// ```
    public func webSocket<Value>(_ request: some RequestConvertible<Value>, options: WebSocketOptions = WebSocketOptions()) -> WebSocket {
        openWebSocket(request.makeRequest(), options: options, handler: nil)
    }

    /// Opens a WebSocket whose events go to `onEvent` with the socket, in order, on the callback
    /// queue (the request's, else the client's): `.opened` (again after each reconnection: send
    /// a subscription there), each `.message`, then `.ended` exactly once. Its `messages`
    /// sequence stays empty. The client keeps the socket until it ends.
    ///
    /// ```swift
    /// client.webSocket(Request<Data>("live/prices")) { socket, event in
    ///     switch event {
    ///     case .opened: socket.send("subscribe CNY") { error in if let error { alert(error) } }
    ///     case .message(.text(let text)): show(text)
    ///     default: break
    ///     }
    /// }
    /// ```
    @discardableResult
    public func webSocket<Value>(
        _ convertible: some RequestConvertible<Value>, options: WebSocketOptions = WebSocketOptions(),
        onEvent: @escaping @Sendable (WebSocket, WebSocketEvent) -> Void
    ) -> WebSocket {
        let request = convertible.makeRequest()
        let queue = callbackQueue(for: request)
        // Held until the end: a socket whose caller kept only the closure runs on.
        let socketBox = Locked<WebSocket?>(nil)
        // The socket is known before its connection starts, so no event can come before it.
        return openWebSocket(request, options: options, prepared: { socket in socketBox.withLock { $0 = socket } }) { event in
            queue.perform {
                guard let socket = socketBox.withLock({ $0 }) else { return }
                if case .ended = event { socketBox.withLock { $0 = nil } }
                onEvent(socket, event)
            }
        }
    }

    /// Opens a WebSocket whose events go to `delegate` (held weakly), on the callback queue.
    @discardableResult
    public func webSocket<Value>(
        _ convertible: some RequestConvertible<Value>, options: WebSocketOptions = WebSocketOptions(), delegate: any WebSocketDelegate
    ) -> WebSocket {
        let weakDelegate = Weak<AnyObject>(delegate)
        return webSocket(convertible, options: options) { socket, event in
            guard let delegate = weakDelegate.object as? any WebSocketDelegate else { return }
            switch event {
            case .opened(let subprotocol): delegate.webSocket(socket, didOpenWith: subprotocol)
            case .message(let message): delegate.webSocket(socket, didReceive: message)
            case .reconnecting(let attempt, let delay): delegate.webSocket(socket, willReconnect: attempt, after: delay)
            case .ended(let ending): delegate.webSocket(socket, didEndWith: ending)
            }
        }
    }

    /// Opens the socket; `prepared` receives it before anything can happen to it.
    private func openWebSocket<Value>(
        _ request: Request<Value>, options: WebSocketOptions, prepared: ((WebSocket) -> Void)? = nil,
        handler: (@Sendable (WebSocketEvent) -> Void)?
    ) -> WebSocket {
        let state = Locked(WebSocket.State())
        let driverLink = Locked<ReconnectingDriver?>(nil)
        // The messages not yet read from `messages`: past the receive buffer, reading pauses.
        let inbox = BackpressureQueue<WebSocketMessage>(limit: options.receiveBufferSize, size: \.byteCount) { hold in
            driverLink.withLock { $0 }?.setReadingPaused(hold)
        }
        var httpRequest = request
        httpRequest.url = Self.httpForm(of: request.url)
        let callOptions = CallOptions(httpRequest, client: self, alwaysReportsCancellation: true)
        let queue = callbackQueue(for: request)
        let id = RequestLifecycle.nextID()
        let lifecycleBox = Locked<WebSocketLifecycle?>(nil)
        // Built once, to name the socket and its host; each connection's call builds it again
        // (as prebuilt: parameter and URL hooks do not run twice) and runs its adapters.
        let urlRequest: URLRequest
        do {
            if let problem = configurationError { throw problem }
            guard !isInvalidated else { throw TernError.clientInvalidated }
            let hooks = HookChain(request: httpRequest, settings: callOptions.settings, client: self)
            (urlRequest, _) = try RequestBuilder.prepare(httpRequest, options: callOptions, hooks: hooks)
        } catch {
            let error = error as? TernError ?? .clientInvalidated
            let lifecycle = WebSocketLifecycle(id: id, url: nil, tags: callOptions.tags, lifetime: request.lifetime)
            let socket = WebSocket(handle: lifecycle.makeHandle(), inbox: inbox, connection: nil, state: state, callbackQueue: queue)
            prepared?(socket)
            Self.socketEvent(.ended(.failed(error)), state: state, inbox: inbox, lifecycle: nil, handler: handler)
            return socket
        }
        let url = urlRequest.url ?? URL(fileURLWithPath: "/")
        let monitor = WebSocketMonitor(client: self, id: id, url: Self.webSocketForm(of: url), tags: callOptions.tags)
        let relay: @Sendable (WebSocketDriverEvent) -> Void = { event in
            monitor?.observe(event)
            Self.socketEvent(event, state: state, inbox: inbox, lifecycle: lifecycleBox.withLock { $0 }, handler: handler)
        }
        let opener = WebSocketOpener(
            client: self, request: Self.upgradeRequest(httpRequest, prepared: url), options: options,
            gateKey: WebSocketConnectGate.key(for: url), observer: monitor?.upgradeObserver)
        let driver = ReconnectingDriver(policy: options.reconnect, opener: opener, events: relay)
        driverLink.withLock { $0 = driver }
        let lifecycle = WebSocketLifecycle(
            id: id, url: Self.webSocketForm(of: url), tags: callOptions.tags, lifetime: request.lifetime, driver: driver)
        lifecycleBox.withLock { $0 = lifecycle }
        let handle = lifecycle.makeHandle()
        lifecycle.begin(retaining: lifecycle.retainsHandle ? handle : nil)
        _ = admit(lifecycle, strategy: .allow)
        lifecycle.start(idle: .infinity, attemptLimit: nil, deadline: .infinity) { [weak self] in self?.leave($0) }
        if lifecycle.lifetime.kind == .owner { OwnerWatcher.shared.watch(lifecycle) }
        lifecycle.markSent()
        let socket = WebSocket(handle: handle, inbox: inbox, connection: driver, state: state, callbackQueue: queue, monitor: monitor)
        prepared?(socket)
        monitor?.created(urlRequest)
        driver.start()
        return socket
    }

    /// The upgrade call of each of a socket's connections: `request` at its `prepared` URL, with
    /// its headers, group, hooks, tags, timeout and deadline; never cached, retried or shared
    /// (reconnection is the socket's policy); its answer must be a 101. Its lifetime is the socket's.
    private static func upgradeRequest<Value>(_ request: Request<Value>, prepared url: URL) -> Request<WebSocketAgreement> {
        var upgrade = Request<WebSocketAgreement>(
            url.absoluteString, headers: request.headers,
            serializer: ResponseSerializer(acceptableContentTypes: nil, emptyValue: nil, kind: .builtIn) { _, _ throws(TernError) in
                throw .webSocketHandshakeFailed(.notUpgraded)  // replaced by each connection's
            })
        upgrade.extras = request.extras
        upgrade.isPrebuilt = true
        upgrade.validation = ResponseValidation(acceptableStatusCodes: [101])
        upgrade.cachePolicy = .disabled
        upgrade.retryPolicy = RetryPolicy.none
        upgrade.repeatStrategy = .allow
        upgrade.lifetime = .untilFinished
        upgrade.progress = nil
        return upgrade
    }

    /// What a socket's connection reports, passed on to its waiters, its inbox and its lifecycle.
    private static func socketEvent(
        _ event: WebSocketDriverEvent, state: Locked<WebSocket.State>, inbox: BackpressureQueue<WebSocketMessage>,
        lifecycle: WebSocketLifecycle?,
        handler: (@Sendable (WebSocketEvent) -> Void)?
    ) {
        defer {
            switch event {
            case .opened(let subprotocol): handler?(.opened(subprotocol: subprotocol))
            case .message(let message): handler?(.message(message))
            case .reconnecting(let attempt, let delay, _): handler?(.reconnecting(attempt: attempt, after: delay))
            case .ended(let ending): handler?(.ended(ending))
            }
        }
        switch event {
        case .opened(let subprotocol):
            let (waiters, openings) = state.withLock { state in
                state.isOpen = true
                state.subprotocol = subprotocol
                defer { state.openWaiters = [] }
                return (state.openWaiters, state.openings)
            }
            for waiter in waiters { waiter.resume(returning: .success(subprotocol)) }
            for opening in openings { opening.yield(subprotocol) }
        case .message(let message):
            if handler == nil { inbox.append(message) }
        case .reconnecting:
            state.withLock { $0.isOpen = false }
        case .ended(let ending):
            let (openWaiters, endWaiters, openings) = state.withLock { state in
                state.isOpen = false
                state.ending = state.ending ?? ending
                defer { (state.openWaiters, state.endWaiters, state.openings) = ([], [], []) }
                return (state.openWaiters, state.endWaiters, state.openings)
            }
            if case .failed(let error) = ending { inbox.finish(.failure(error)) } else { inbox.finish(.success(())) }
            for opening in openings { opening.finish() }
            for waiter in openWaiters { waiter.resume(returning: .failure(WebSocket.error(of: ending))) }
            for waiter in endWaiters { waiter.resume(returning: ending) }
            lifecycle?.socketEnded()
        }
    }

    /// `ws://…` as `http://…`, `wss://…` as `https://…`; anything else as it is.
    static func httpForm(of url: String) -> String {
        let lower = url.lowercased()
        if lower.hasPrefix("ws://") { return "http://" + url.dropFirst(5) }
        if lower.hasPrefix("wss://") { return "https://" + url.dropFirst(6) }
        return url
    }

    /// An `http(s)` URL as its WebSocket form, `ws(s)`.
    static func webSocketForm(of url: URL) -> URL {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url }
        components.scheme = components.scheme?.lowercased() == "https" ? "wss" : "ws"
        return components.url ?? url
    }
}

/// A WebSocket's place among the client's requests: registered while it runs, so the cancel APIs,
/// an owner's release and `invalidate()` end it.
// Sendable: adds only a constant to `RequestLifecycle`.
final class WebSocketLifecycle: RequestLifecycle, @unchecked Sendable {
    private let driver: ReconnectingDriver?

    init(id: UInt64, url: URL?, tags: Set<String>, lifetime: Lifetime, driver: ReconnectingDriver? = nil) {
        self.driver = driver
        super.init(id: id, method: .get, url: url, tags: tags, lifetime: lifetime)
    }

    /// A cancel (or an owner's release) ended it: the socket fails with that error.
    override func deliverEarly(_ error: TernError, handle: RequestHandle?) {
        driver?.abort(error)
    }

    /// The socket ended by itself: the request is over.
    func socketEnded() {
        fail(.cancelled(.explicit))
    }
}
