#if canImport(Glibc) || canImport(Musl)
#if canImport(Glibc)
import Glibc
#else
import Musl
#endif
import CTernCurl
import Foundation

/// A transport on the system libcurl (Linux), loaded at run time: easy and multi handles driven by
/// one event-loop thread, without FoundationNetworking's layers in between.
///
/// The default transport of a Linux `Client`; `CurlTransport.make(settings:)` builds one
/// explicitly (nil where libcurl cannot be used: no `libcurl.so.4`, or one older than 7.68.0;
/// `CurlTransport.unavailableReason` says why). Every libcurl handle belongs to the event loop
/// (`CurlEventLoop`), whose thread drives them; callers put submissions, cancels and pauses in a
/// locked inbox and wake the loop (`CurlWakeup`) when it sleeps, except that a plain-HTTP request
/// sent while the loop has nothing to do goes out from the caller's thread, which wakes the loop
/// only for the answer. Requests beyond the connection limit wait in a
/// FIFO queue per origin. Each exchange completes exactly once: finished by libcurl, cancelled,
/// or failed when the transport is invalidated. A slow stream reader pauses its exchange
/// (`curl_easy_pause`).
/// Redirects are never followed (Tern follows them), bodies come from memory or a file, responses
/// go to memory (the size limit is enforced as the head and each chunk arrive) or to a file, and
/// `Accept-Encoding` is decoded by libcurl; the settings' credential answers Basic (and
/// Digest) challenges, and without one a 401 comes back at once; cookies come from and go to the
/// settings' `cookieStorage` (`HTTPCookieStorage.shared` by default), as with URLSession
/// (unless a request turns `httpShouldHandleCookies` off). The settings' `tls` sets the
/// trusted authorities, the TLS floor, the client certificate and public-key pins
/// (`CURLOPT_PINNEDPUBLICKEY`, per host); its `proxy` is the environment's (libcurl reads
/// `http_proxy`, `https_proxy`, `no_proxy`), none, or an explicit one. Every exchange reports
/// `Metrics` from `curl_easy_getinfo`. Creating one ignores `SIGPIPE` for the process: libcurl writes to
/// sockets that a server may have closed.
/// Thread safety: safe to use from any thread.
public final class CurlTransport: Transport {
    struct Inbox {
        var submissions: [CurlExchange] = []
        var cancels: [UInt64] = []
        /// Exchanges to pause (true) or resume (false), in order.
        var pauses: [(id: UInt64, paused: Bool)] = []
        /// Exchanges whose produced body has more to send.
        var bodiesReady: [UInt64] = []
        /// Swift jobs for the loop thread (`taskExecutor`).
        var jobs: [UnownedJob] = []
        var sleeping = false
        var stopping = false
        var nextID: UInt64 = 1
    }

    private let wakeup: CurlWakeup
    private let inbox: Locked<Inbox>
    private let loopExecutor: CurlLoopExecutor
    private let loop: CurlEventLoop
    /// Whether a request may go out from the caller's thread while the loop waits.
    private let startsDirectly: Bool

    /// The transport's event-loop thread as a Swift task executor. Under
    /// `withTaskExecutorPreference(transport.taskExecutor) { … }` a task's requests go to libcurl
    /// and its responses come back without a thread hop either way: for request-heavy sequential
    /// code (a crawler, a fan-out on a server) one context switch per request instead of about
    /// two, and about a tenth less CPU (measured with tern-bench's `seq-curl-executor`).
    /// The price: that code runs on the thread that moves every byte of this transport, so
    /// anything slow in it — a blocking call, decoding a large body in your own code — stalls
    /// every transfer of the transport until it returns. Tern still moves its own slow work
    /// (large bodies, custom serializers, cache writes) off the thread. After `invalidate()`
    /// such tasks run on Swift's global executor.
    public var taskExecutor: any TaskExecutor { loopExecutor }

    /// Why libcurl cannot be used here, or nil when it can.
    public static var unavailableReason: String? {
        if case .failure(let failure) = LibCurl.loaded { return failure.description }
        return nil
    }

    /// The libcurl version in use, e.g. "7.88.1"; nil when there is none.
    public static var libcurlVersion: String? { try? LibCurl.loaded.get().version }

    /// A transport, or nil when libcurl cannot be used (see `unavailableReason`).
    /// - Parameter settings: The wire headers (`User-Agent`, `Accept-Encoding`,
    ///   `Accept-Language`), credential, cookie storage, TLS settings, proxy and
    ///   `maximumConnectionsPerHost` it uses.
    public static func make(settings: TransportSettings = TransportSettings()) -> CurlTransport? {
        make(settings: settings, startsDirectly: true)
    }

    /// `startsDirectly: false` sends every request from the loop thread (each one wakes it);
    /// `idleWaitMilliseconds` bounds the loop's sleep with nothing running (tests lengthen it, so
    /// that a loop sleeping through an answer cannot go unnoticed).
    static func make(settings: TransportSettings, startsDirectly: Bool, idleWaitMilliseconds: Int32 = 1000) -> CurlTransport? {
        guard let curl = try? LibCurl.loaded.get(), let wakeup = CurlWakeup(), let multi = curl.multiInit() else { return nil }
        let inbox = Locked(Inbox())
        let executor = CurlLoopExecutor(inbox: inbox, wakeup: wakeup)
        let connectionsPerHost = max(1, settings.maximumConnectionsPerHost)
        guard
            let loop = CurlEventLoop(
                curl: curl, multi: multi, wakeup: wakeup, inbox: inbox, executor: executor, connectionsPerHost: connectionsPerHost,
                idleWaitMilliseconds: idleWaitMilliseconds)
        else {
            _ = curl.multiCleanup(multi)
            return nil
        }
        return CurlTransport(
            curl: curl, multi: multi, loop: loop, wakeup: wakeup, inbox: inbox, executor: executor,
            settings: CurlSettings(settings, curl: curl), connectionsPerHost: connectionsPerHost, startsDirectly: startsDirectly)
    }

    /// What every exchange (and WebSocket connection) of this transport is set up with.
    let settings: CurlSettings

    /// Whether `invalidate()` has run: no new work then.
    var isInvalidated: Bool { inbox.withLock { $0.stopping } }

    private init(
        curl: LibCurl, multi: LibCurl.Handle, loop: CurlEventLoop, wakeup: CurlWakeup, inbox: Locked<Inbox>, executor: CurlLoopExecutor,
        settings: CurlSettings, connectionsPerHost: Int, startsDirectly: Bool
    ) {
        self.wakeup = wakeup
        self.inbox = inbox
        self.loop = loop
        self.settings = settings
        self.loopExecutor = executor
        self.startsDirectly = startsDirectly
        signal(SIGPIPE, SIG_IGN)
        curl.set(multi: multi, .maxConnects, 100)
        curl.set(multi: multi, .maxHostConnections, connectionsPerHost)
        curl.set(multi: multi, .pipelining, 2)  // CURLPIPE_MULTIPLEX: HTTP/2 streams share a connection
        let thread = Thread { loop.run() }
        thread.name = "Tern.CurlTransport"
        thread.start()
    }

    deinit {
        stop()
    }

    /// Sends the request from this thread when the loop waits and its lock is free (plain HTTP),
    /// else queues the exchange for the loop thread; nil once invalidated.
    public func start(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
        let numbered = inbox.withLock { inbox -> (id: UInt64, loopWaits: Bool)? in
            guard !inbox.stopping else { return nil }
            defer { inbox.nextID += 1 }
            return (inbox.nextID, inbox.sleeping)
        }
        guard let (id, loopWaits) = numbered else { return nil }
        let exchange = CurlExchange(id: id, request: request, settings: settings, events: events)
        if exchange.producesBody {
            exchange.whenBodyReadable = { [weak self] in self?.bodyReady(id) }
        }
        let direct =
            startsDirectly && loopWaits && !exchange.producesBody && exchange.origin.hasPrefix("http:") && loop.startDirectly(exchange)
        if !direct {
            guard wakeup.post(to: inbox, { $0.submissions.append(exchange) }) != nil else { return nil }
        }
        return CurlTask(id: id, transport: self)
    }

    /// How many requests went out from their caller's thread without waking the loop, and how
    /// many could not because their socket's number was 1024 or more.
    var directSends: (sent: Int, socketBeyondFDSet: Int) { loop.directSends }

    /// Exchanges waiting for a connection to their origin (its connection limit), by origin.
    var queuedByOrigin: [String: Int] { loop.queuedByOrigin }

    /// True: `curl_easy_pause` stops reading a response until it is resumed.
    public var pausesExchanges: Bool { true }

    /// True: every exchange carries the settings' wire headers unless its request sets them.
    public var sendsWireHeaders: Bool { true }

    /// Pauses or resumes reading exchange `id`'s response (`curl_easy_pause` on the loop thread).
    fileprivate func setPaused(_ id: UInt64, _ paused: Bool) {
        wakeup.post(to: inbox) { $0.pauses.append((id, paused)) }
    }

    /// Exchange `id`'s produced body has more to send (`curl_easy_pause` on the loop thread).
    private func bodyReady(_ id: UInt64) {
        wakeup.post(to: inbox) { $0.bodiesReady.append(id) }
    }

    /// Cancels exchange `id`: it completes with `URLError(.cancelled)` unless it already completed.
    fileprivate func cancel(_ id: UInt64) {
        wakeup.post(to: inbox) { $0.cancels.append(id) }
    }

    /// Cancels everything in flight and refuses new work; the loop thread then ends.
    public func invalidate() {
        stop()
    }

    private func stop() {
        wakeup.post(to: inbox) { inbox in
            inbox.stopping = true
            inbox.sleeping = true  // however it is: the loop must see `stopping`
        }
    }
}

/// How other threads wake a `CurlTransport`'s loop: an eventfd it polls beside libcurl's sockets, or in
/// its epoll set while nothing runs.
///
/// The eventfd lives as long as this object, which the transport and the loop both hold, so a
/// signal is sent after the inbox lock is released (a wakeup sent with it held sent the woken
/// loop straight into the lock: 15% more context switches).
final class CurlWakeup: Sendable {
    /// The eventfd.
    let descriptor: Int32

    /// A wakeup, or nil when no eventfd can be made.
    init?() {
        descriptor = tern_wakeup_open()
        guard descriptor >= 0 else { return nil }
    }

    deinit {
        tern_wakeup_close(descriptor)
    }

    /// Changes `inbox` under its lock unless the transport is stopping, then wakes the loop if it
    /// sleeps; `change`'s result, nil when the transport was already stopping. Every queued
    /// submission, cancel, pause, job and the stop go through here.
    @discardableResult
    func post<Result>(to inbox: Locked<CurlTransport.Inbox>, _ change: (inout CurlTransport.Inbox) -> Result) -> Result? {
        let (result, wake) = inbox.withLock { inbox -> (Result?, Bool) in
            guard !inbox.stopping else { return (nil, false) }
            let result = change(&inbox)
            defer { inbox.sleeping = false }
            return (result, inbox.sleeping)
        }
        if wake { tern_wakeup_signal(descriptor) }
        return result
    }
}

/// An exchange of a `CurlTransport`, to cancel it.
private struct CurlTask: TransportTask {
    let id: UInt64
    weak var transport: CurlTransport?
    func cancel() { transport?.cancel(id) }
    func suspend() { transport?.setPaused(id, true) }
    func resume() { transport?.setPaused(id, false) }
}
#endif
