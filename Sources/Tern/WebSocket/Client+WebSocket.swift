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
        let weakDelegate = WeakWebSocketDelegate(delegate)
        return webSocket(convertible, options: options) { socket, event in
            guard let delegate = weakDelegate.delegate else { return }
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
        let inboxLink = Locked<(any WebSocketDriver)?>(nil)
        let inbox = WebSocketInbox(limit: options.receiveBufferSize) { hold in
            inboxLink.withLock { $0 }?.setReadingPaused(hold)
        }
        var httpRequest = request
        httpRequest.url = Self.httpForm(of: request.url)
        let options = options
        let callOptions = CallOptions(httpRequest, client: self, alwaysReportsCancellation: true)
        let hooks = HookChain(request: httpRequest, settings: callOptions.settings, client: self)
        let lifecycleBox = Locked<WebSocketLifecycle?>(nil)
        let queue = callbackQueue(for: request)
        let id = RequestLifecycle.nextID()
        // A socket that cannot start: unregistered, ended with `error` before it is returned.
        func failed(_ error: TernError, url: URL?) -> WebSocket {
            let url = url.map(Self.webSocketForm(of:))
            let lifecycle = WebSocketLifecycle(id: id, url: url, tags: callOptions.tags, lifetime: request.lifetime)
            let socket = WebSocket(handle: lifecycle.makeHandle(), inbox: inbox, connection: nil, state: state, callbackQueue: queue)
            prepared?(socket)
            url.flatMap { WebSocketMonitor(client: self, id: id, url: $0, tags: callOptions.tags) }?.observe(.ended(.failed(error)))
            Self.socketEvent(.ended(.failed(error)), state: state, inbox: inbox, lifecycle: nil, handler: handler)
            return socket
        }
        let urlRequest: URLRequest
        do {
            if let problem = configurationError { throw problem }
            guard !isInvalidated else { throw TernError.clientInvalidated }
            (urlRequest, _) = try RequestBuilder.prepare(httpRequest, options: callOptions, hooks: hooks)
        } catch {
            return failed(error as? TernError ?? .clientInvalidated, url: nil)
        }
        let url = urlRequest.url ?? URL(fileURLWithPath: "/")
        let connection: any WebSocketDriver
        let monitor = WebSocketMonitor(client: self, id: id, url: Self.webSocketForm(of: url), tags: callOptions.tags)
        let relay: @Sendable (WebSocketDriverEvent) -> Void = { event in
            monitor?.observe(event)
            Self.socketEvent(event, state: state, inbox: inbox, lifecycle: lifecycleBox.withLock { $0 }, handler: handler)
        }
        let serving = exchanges.transport.webSocketServer
        let settings = configuration.transportSettings
        // One connection: served in the process by a transport that serves sockets (TernStubs),
        // else Tern's protocol over the platform's connection.
        let make: ReconnectingDriver.Make = { events in
            if let serving {
                return .success(WebSocketPeer(serving: serving, request: urlRequest, protocols: options.protocols, events: events))
            }
            let queue = DispatchQueue(label: "Tern.WebSocket")
            return WebSocketStreams.make(to: url, settings: settings, connectTimeout: callOptions.timeout, queue: queue).map { stream in
                WebSocketConnection(
                    stream: stream, queue: queue, url: url, headers: urlRequest.allHTTPHeaderFields ?? [:], options: options,
                    openingLimits: (callOptions.timeout, callOptions.deadline), events: events)
            }
        }
        // Each connection's upgrade request goes through the adapters (a fresh token on a reconnection).
        let adapters = hooks?.adapters ?? []
        let tags = callOptions.tags
        let upgrades = WebSocketUpgrades(rules: hooks?.rules ?? [], url: url, tags: tags)
        let start: @Sendable (any WebSocketDriver) -> Void = { driver in
            let open: @Sendable (URLRequest) -> Void = { request in
                let traced = monitor?.traced(request) ?? request
                monitor?.connecting(traced)
                upgrades.sent(traced)
                driver.open(headers: traced.allHTTPHeaderFields ?? [:])
            }
            guard !adapters.isEmpty else { return open(urlRequest) }
            AdaptStage(adapters: adapters).run(urlRequest, for: AttemptInfo(number: 1, tags: tags)) { outcome in
                switch outcome {
                case .success(let adapted): open(adapted)
                case .failure(let error): driver.abort(error)
                }
            }
        }
        // A socket that may connect again: under its policy, or when a rule restarts a refused upgrade.
        if options.reconnect.maxAttempts > 0 || upgrades.hasRules {
            connection = ReconnectingDriver(policy: options.reconnect, make: make, start: start, review: upgrades.review, events: relay)
        } else {
            switch make(relay) {
            case .success(let driver):
                connection = driver
            case .failure(let error):
                return failed(error, url: url)
            }
        }
        inboxLink.withLock { $0 = connection }
        let lifecycle = WebSocketLifecycle(
            id: id, url: Self.webSocketForm(of: url), tags: callOptions.tags, lifetime: request.lifetime, connection: connection)
        lifecycleBox.withLock { $0 = lifecycle }
        let handle = lifecycle.makeHandle()
        lifecycle.begin(retaining: lifecycle.retainsHandle ? handle : nil)
        _ = admit(lifecycle, strategy: .allow)
        lifecycle.start(idle: .infinity, attemptLimit: nil, deadline: .infinity) { [weak self] in self?.leave($0) }
        if lifecycle.lifetime.kind == .owner { OwnerWatcher.shared.watch(lifecycle) }
        lifecycle.markSent()
        let socket = WebSocket(handle: handle, inbox: inbox, connection: connection, state: state, callbackQueue: queue, monitor: monitor)
        prepared?(socket)
        monitor?.created(urlRequest)
        if connection is ReconnectingDriver { connection.open(headers: nil) } else { start(connection) }
        return socket
    }

    /// What a socket's connection reports, passed on to its waiters, its inbox and its lifecycle.
    private static func socketEvent(
        _ event: WebSocketDriverEvent, state: Locked<WebSocket.State>, inbox: WebSocketInbox, lifecycle: WebSocketLifecycle?,
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
            if handler == nil { inbox.deliver(message) }
        case .reconnecting:
            state.withLock { $0.isOpen = false }
        case .ended(let ending):
            let (openWaiters, endWaiters, openings) = state.withLock { state in
                state.isOpen = false
                state.ending = state.ending ?? ending
                defer { (state.openWaiters, state.endWaiters, state.openings) = ([], [], []) }
                return (state.openWaiters, state.endWaiters, state.openings)
            }
            inbox.end(ending)
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
    private let connection: (any WebSocketDriver)?

    init(id: UInt64, url: URL?, tags: Set<String>, lifetime: Lifetime, connection: (any WebSocketDriver)? = nil) {
        self.connection = connection
        super.init(id: id, method: .get, url: url, tags: tags, lifetime: lifetime)
    }

    /// A cancel (or an owner's release) ended it: the socket fails with that error.
    override func deliverEarly(_ error: TernError, handle: RequestHandle?) {
        connection?.abort(error)
    }

    /// The socket ended by itself: the request is over.
    func socketEnded() {
        fail(.cancelled(.explicit))
    }
}
