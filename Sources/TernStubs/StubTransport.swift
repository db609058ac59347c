import Foundation
import Tern

/// A transport that answers from stubs instead of the network, for app developers' tests.
///
/// It plugs in at Tern's transport seam (`ClientConfiguration.transport`), so it behaves the
/// same on Linux and Apple platforms — unlike `URLProtocol` stubs, which lose data chunks and
/// crash on redirects and downloads on Linux. Each instance is its own registry: give each test
/// its own `StubTransport` and client, and tests run in parallel.
/// ```swift
/// let stubs = StubTransport()
/// stubs.stub(.get("/v1/weather").query(["city": "101010100"]), .json(["code": 0, "temp": 3]))
/// stubs.stub(.get("/v1/flaky"), [.status(503), .json(["ok": true])])   // 503 once, then 200
/// let client = Client(baseURL: "https://api.test") { $0.transport = stubs }
/// ```
/// A request no stub matches fails with `URLError(.resourceUnavailable)` whose description names
/// the request. Thread safety: safe to use from any thread.
public final class StubTransport: Transport {
    private struct Stub {
        let matcher: StubMatcher
        var responses: [StubResponse]
        var handler: (@Sendable (URLRequest) -> StubResponse)?
        var served = 0
    }

    private struct State {
        var stubs: [Stub] = []
        var received: [URLRequest] = []
        var isOffline = false
    }

    private let state = Locked(State())
    /// The stub sockets, latest last (`stubWebSocket`).
    let webSocketStubs = Locked<[(matcher: StubMatcher, socket: StubWebSocket)]>([])
    private let queue = DispatchQueue(label: "TernStubs.delivery", attributes: .concurrent)

    /// Creates an empty registry.
    public init() {}

    /// Answers requests matching `matcher` with `response`. Later stubs win over earlier ones.
    public func stub(_ matcher: StubMatcher, _ response: StubResponse) {
        stub(matcher, [response])
    }

    /// Answers requests matching `matcher` with `responses` in turn; the last one repeats.
    public func stub(_ matcher: StubMatcher, _ responses: [StubResponse]) {
        precondition(!responses.isEmpty, "a stub needs at least one response")
        state.withLock { $0.stubs.append(Stub(matcher: matcher, responses: responses)) }
    }

    /// Answers requests matching `matcher` with whatever `handler` builds from the request: for
    /// answers that depend on it (a search that echoes its query, an embedded demo server).
    /// `handler` runs on the caller's thread, inside `start`.
    public func stub(_ matcher: StubMatcher, handler: @escaping @Sendable (URLRequest) -> StubResponse) {
        state.withLock { $0.stubs.append(Stub(matcher: matcher, responses: [], handler: handler)) }
    }

    /// A connectivity monitor that follows `goOffline()` and `goOnline()` (reachable at first):
    /// give it to the client (`ClientConfiguration.networkMonitor`) or an `Outbox`, so that your
    /// tests play an offline period and the return of the network.
    public let networkMonitor = NetworkMonitor(status: NetworkStatus(isReachable: true, interfaces: [.wifi]))

    /// Whether the stub network is offline (`goOffline()`).
    public var isOffline: Bool { state.withLock { $0.isOffline } }

    /// Takes the stub network offline: every request fails with `URLError(.notConnectedToInternet)`
    /// without reaching a stub (nor `receivedRequests`), and `networkMonitor` reports no network.
    public func goOffline() {
        state.withLock { $0.isOffline = true }
        networkMonitor.report(NetworkStatus(isReachable: false))
    }

    /// Brings the stub network back: stubs answer again, and `networkMonitor` reports the change
    /// (an outbox then sends what waited).
    public func goOnline() {
        state.withLock { $0.isOffline = false }
        networkMonitor.report(NetworkStatus(isReachable: true, interfaces: [.wifi]))
    }

    /// Removes every stub, forgets the received requests and brings the network back.
    public func reset() {
        state.withLock { $0 = State() }
        networkMonitor.report(NetworkStatus(isReachable: true, interfaces: [.wifi]))
        webSocketStubs.withLock { $0 = [] }
    }

    /// Records a request received outside `start` (a WebSocket's upgrade request).
    func record(_ request: URLRequest) {
        state.withLock { $0.received.append(request) }
    }

    /// Every request this transport received, in order, matched or not.
    public var receivedRequests: [URLRequest] { state.withLock { $0.received } }

    /// The received requests a matcher selects, e.g. to assert on what was posted.
    public func received(_ matcher: StubMatcher) -> [URLRequest] {
        receivedRequests.filter(matcher.matches)
    }

    /// Answers `transportRequest` from the matching stub on a private queue. Redirect responses
    /// are handed back like any other (Tern follows them); a memory limit and a file destination
    /// are honoured as a real transport honours them.
    public func start(_ transportRequest: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
        let request = transportRequest.urlRequestWithBody
        let (found, isOffline) = state.withLock { state -> (Stub?, Bool) in
            guard !state.isOffline else { return (nil, true) }
            state.received.append(request)
            guard let index = state.stubs.lastIndex(where: { $0.matcher.matches(request) }) else { return (nil, false) }
            defer { state.stubs[index].served += 1 }
            return (state.stubs[index], false)
        }
        if isOffline {
            let task = StubTask(events: events, queue: queue)
            task.queue.async { task.finish(URLError(.notConnectedToInternet)) }
            return task
        }
        // A handler runs outside the lock: it is the caller's code.
        let response = found.map { stub in stub.handler?(request) ?? stub.responses[min(stub.served, stub.responses.count - 1)] }
        let task = StubTask(events: events, queue: queue)
        guard let response else {
            let description = "TernStubs: no stub matches \(request.httpMethod ?? "GET") \(request.url?.absoluteString ?? "(no URL)")"
            task.queue.async { task.finish(URLError(.resourceUnavailable, userInfo: [NSLocalizedDescriptionKey: description])) }
            return task
        }
        deliver(response, for: request, destination: transportRequest.destination, to: task)
        return task
    }

    /// Stubs keep no resources; nothing to invalidate.
    public func invalidate() {}

    private func deliver(
        _ response: StubResponse, for request: URLRequest, destination: TransportRequest.Destination,
        to task: StubTask
    ) {
        task.queue.asyncAfter(deadline: .now() + response.delay) { [self] in
            if let failure = response.failure { return task.finish(failure) }
            // Like a server, state the body's length unless the stub chose otherwise: progress
            // code then knows the total.
            var headers = response.headers
            if !headers.keys.contains(where: { $0.caseInsensitiveCompare("Content-Length") == .orderedSame }) {
                headers["Content-Length"] = String(response.body.count)
            }
            guard let url = request.url,
                let http = HTTPURLResponse(url: url, statusCode: response.status, httpVersion: "HTTP/1.1", headerFields: headers)
            else { return task.finish(URLError(.badServerResponse)) }
            var file: URL?
            switch destination {
            case .memory(let limit?) where response.body.count > limit:
                return task.finish(URLError(.dataLengthExceedsMaximum))
            case .file(let url, let offset) where (200..<300).contains(response.status):
                // Like a transport: a 206 continues at the offset, any other 2xx replaces the file,
                // and other statuses leave it alone; each piece is written as it is sent.
                if let error = Self.cut(url, at: response.status == 206 ? offset : 0) { return task.finish(error) }
                file = url
            case .file, .memory:
                break
            }
            guard task.send(.head(ResponseHead(http))) else { return }
            send(Self.split(response.body, into: response.chunks), from: 0, every: response.chunkInterval, writingTo: file, to: task)
        }
    }

    /// Sends the body pieces from `index` on, `interval` seconds apart (appending each to `file`
    /// first, if any), then completes.
    private func send(_ pieces: [Data], from index: Int, every interval: TimeInterval, writingTo file: URL?, to task: StubTask) {
        guard index < pieces.count else { return task.finish(nil) }
        if let file, !task.isCancelled, let error = Self.append(pieces[index], to: file) { return task.finish(error) }
        guard task.send(.data(pieces[index])) else { return }
        if interval > 0 && index + 1 < pieces.count {
            task.queue.asyncAfter(deadline: .now() + interval) { [self] in
                send(pieces, from: index + 1, every: interval, writingTo: file, to: task)
            }
        } else {
            send(pieces, from: index + 1, every: interval, writingTo: file, to: task)
        }
    }

    /// Creates `file` or cuts it to its first `offset` bytes.
    private static func cut(_ file: URL, at offset: Int64) -> URLError? {
        do {
            let kept = offset > 0 ? ((try? Data(contentsOf: file)) ?? Data()).prefix(Int(offset)) : Data()
            try kept.write(to: file)
            return nil
        } catch {
            return URLError(.cannotWriteToFile, userInfo: [NSLocalizedDescriptionKey: "cannot write \(file.path): \(error)"])
        }
    }

    private static func append(_ piece: Data, to file: URL) -> URLError? {
        do {
            let handle = try FileHandle(forWritingTo: file)
            defer { try? handle.close() }
            try handle.seekToEndOfFileOrThrow()
            try handle.writeAll(piece)
            return nil
        } catch {
            return URLError(.cannotWriteToFile, userInfo: [NSLocalizedDescriptionKey: "cannot write \(file.path): \(error)"])
        }
    }

    private static func split(_ body: Data, into pieces: Int) -> [Data] {
        guard pieces > 1, body.count > 1 else { return body.isEmpty ? [] : [body] }
        let size = (body.count + pieces - 1) / pieces
        // Offsets from the body's own start: a slice of other data does not start at 0.
        return stride(from: body.startIndex, to: body.endIndex, by: size).map { body.subdata(in: $0..<min($0 + size, body.endIndex)) }
    }
}

/// One stubbed request: delivers events until it finishes or is cancelled, then nothing.
///
/// Every event, the completion and a cancel run on the task's own serial queue, so nothing can
/// be reported after the completion, whatever thread cancels.
final class StubTask: TransportTask, Sendable {
    private let events: @Sendable (TransportEvent) -> Void
    /// The task's serial queue: its deliveries and its cancel run here, one after another.
    let queue: DispatchQueue
    private let isFinished = Locked(false)

    init(events: @escaping @Sendable (TransportEvent) -> Void, queue: DispatchQueue) {
        self.events = events
        self.queue = DispatchQueue(label: "TernStubs.task", target: queue)
    }

    /// Whether the task has finished (completed or cancelled).
    var isCancelled: Bool { isFinished.withLock { $0 } }

    /// Sends an event unless the task has finished; returns whether it is still running.
    /// Call on `queue`.
    func send(_ event: TransportEvent) -> Bool {
        guard !isFinished.withLock({ $0 }) else { return false }
        events(event)
        return true
    }

    /// Ends the task once with `error` (nil: complete). Call on `queue`.
    func finish(_ error: URLError?) {
        let first = isFinished.withLock { finished -> Bool in
            defer { finished = true }
            return !finished
        }
        if first { events(.completed(error)) }
    }

    func cancel() { queue.async { self.finish(URLError(.cancelled)) } }
}
