#if canImport(Glibc) || canImport(Musl)
#if canImport(Glibc)
import Glibc
#else
import Musl
#endif
import Foundation

/// A transport on the system libcurl (Linux), loaded at run time: easy and multi handles driven by
/// one event-loop thread, without FoundationNetworking's layers in between.
///
/// The default transport of a Linux `Client`; `CurlTransport.make(configuration:)` builds one
/// explicitly (nil where libcurl cannot be used: no `libcurl.so.4`, or one older than 7.68.0;
/// `CurlTransport.unavailableReason` says why). Every libcurl handle lives on the loop thread
/// (`CurlEventLoop`); callers only put submissions, cancels and pauses in a locked inbox and wake
/// the loop (`curl_multi_wakeup`) when it sleeps. Requests beyond the connection limit wait in a
/// FIFO queue per origin. Each exchange completes exactly once: finished by libcurl, cancelled,
/// or failed when the transport is invalidated. A slow stream reader pauses its exchange
/// (`curl_easy_pause`).
/// Redirects are never followed (Tern follows them), bodies come from memory or a file, responses
/// go to memory (the size limit is enforced as the head and each chunk arrive) or to a file, and
/// `Accept-Encoding` is decoded by libcurl; the configuration's credential answers Basic (and
/// Digest) challenges, and without one a 401 comes back at once; cookies come from and go to the
/// configuration's `cookieStorage` (`HTTPCookieStorage.shared` by default), as with URLSession
/// (unless a request turns `httpShouldHandleCookies` off). The configuration's `tls` sets the
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
        var sleeping = false
        var stopping = false
        var nextID: UInt64 = 1
    }

    private let curl: LibCurl
    private let multi: MultiHandle
    private let inbox = Locked(Inbox())

    /// Why libcurl cannot be used here, or nil when it can.
    public static var unavailableReason: String? {
        if case .failure(let failure) = LibCurl.loaded { return failure.description }
        return nil
    }

    /// The libcurl version in use, e.g. "7.88.1"; nil when there is none.
    public static var libcurlVersion: String? { try? LibCurl.loaded.get().version }

    /// A transport, or nil when libcurl cannot be used (see `unavailableReason`).
    /// - Parameter configuration: The client configuration whose wire headers (`User-Agent`,
    ///   `Accept-Encoding`, `Accept-Language`), credential, cookie storage, TLS settings, proxy
    ///   and `maximumConnectionsPerHost` it uses.
    public static func make(configuration: ClientConfiguration = ClientConfiguration()) -> CurlTransport? {
        guard let curl = try? LibCurl.loaded.get(), let multi = curl.multiInit() else { return nil }
        return CurlTransport(curl: curl, multi: multi, settings: CurlSettings(configuration),
                             connectionsPerHost: configuration.maximumConnectionsPerHost)
    }

    /// What every exchange of this transport is set up with.
    private let settings: CurlSettings

    private init(curl: LibCurl, multi: LibCurl.Handle, settings: CurlSettings, connectionsPerHost: Int) {
        self.curl = curl
        self.multi = MultiHandle(pointer: multi)
        self.settings = settings
        signal(SIGPIPE, SIG_IGN)
        curl.set(multi: multi, .maxConnects, 100)
        curl.set(multi: multi, .maxHostConnections, max(1, connectionsPerHost))
        curl.set(multi: multi, .pipelining, 2)  // CURLPIPE_MULTIPLEX: HTTP/2 streams share a connection
        let thread = Thread { [curl, inbox, multi = self.multi] in
            CurlEventLoop(curl: curl, multi: multi.pointer, inbox: inbox, connectionsPerHost: max(1, connectionsPerHost)).run()
        }
        thread.name = "Tern.CurlTransport"
        thread.start()
    }

    deinit {
        stop()
    }

    /// Queues the exchange for the loop thread; nil once invalidated.
    public func start(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
        let (exchange, wake) = inbox.withLock { inbox -> (CurlExchange?, Bool) in
            guard !inbox.stopping else { return (nil, false) }
            let exchange = CurlExchange(id: inbox.nextID, request: request, settings: settings, events: events)
            inbox.nextID += 1
            inbox.submissions.append(exchange)
            return (exchange, inbox.sleeping)
        }
        guard let exchange else { return nil }
        if wake { _ = curl.multiWakeup(multi.pointer) }
        return CurlTask(id: exchange.id, transport: self)
    }

    /// True: `curl_easy_pause` stops reading a response until it is resumed.
    public var pausesExchanges: Bool { true }

    /// Pauses or resumes reading exchange `id`'s response (`curl_easy_pause` on the loop thread).
    fileprivate func setPaused(_ id: UInt64, _ paused: Bool) {
        let wake = inbox.withLock { inbox -> Bool in
            guard !inbox.stopping else { return false }
            inbox.pauses.append((id, paused))
            return inbox.sleeping
        }
        if wake { _ = curl.multiWakeup(multi.pointer) }
    }

    /// Cancels exchange `id`: it completes with `URLError(.cancelled)` unless it already completed.
    fileprivate func cancel(_ id: UInt64) {
        let wake = inbox.withLock { inbox -> Bool in
            guard !inbox.stopping else { return false }
            inbox.cancels.append(id)
            return inbox.sleeping
        }
        if wake { _ = curl.multiWakeup(multi.pointer) }
    }

    /// Cancels everything in flight and refuses new work; the loop thread then ends.
    public func invalidate() {
        stop()
    }

    private func stop() {
        let wasStopping = inbox.withLock { inbox -> Bool in
            defer { inbox.stopping = true }
            return inbox.stopping
        }
        if !wasStopping { _ = curl.multiWakeup(multi.pointer) }
    }
}

/// The multi handle, shared with other threads only for `curl_multi_wakeup` (documented thread-safe).
// Sendable: every other use of the pointer happens on the loop thread.
struct MultiHandle: @unchecked Sendable {
    let pointer: LibCurl.Handle
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
