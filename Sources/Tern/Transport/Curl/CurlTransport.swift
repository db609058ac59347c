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
/// Opt in per client with `$0.transport = CurlTransport.make()` (nil where libcurl cannot be used:
/// no `libcurl.so.4`, or one older than 7.68.0; `CurlTransport.unavailableReason` says why).
/// Every libcurl handle lives on the loop thread; callers only put submissions and cancels in a
/// locked inbox and wake the loop (`curl_multi_wakeup`) when it sleeps. Each exchange completes
/// exactly once: finished by libcurl, cancelled, or failed when the transport is invalidated.
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
    private struct Inbox {
        var submissions: [CurlExchange] = []
        var cancels: [UInt64] = []
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
            EventLoop(curl: curl, multi: multi, inbox: inbox).run()
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

    /// The loop thread's state: created inside the thread, never shared.
    private struct EventLoop {
        let curl: LibCurl
        let multi: MultiHandle
        let inbox: Locked<Inbox>
        /// While transfers run, the loop wakes at least this often (a stall in libcurl 7.88's
        /// HTTP/2 code left transfers waiting for the whole poll timeout otherwise).
        static let activePollMilliseconds: Int32 = 20

        func run() {
            var running: [UInt64: CurlExchange] = [:]
            var byHandle: [UnsafeMutableRawPointer: CurlExchange] = [:]
            var pool: [LibCurl.Handle] = []
            var stillRunning: Int32 = 0
            while true {
                let (submissions, cancels, stopping) = inbox.withLock { inbox in
                    defer { inbox.submissions = []; inbox.cancels = []; inbox.sleeping = false }
                    return (inbox.submissions, inbox.cancels, inbox.stopping)
                }
                for exchange in submissions {
                    guard let easy = pool.popLast() ?? curl.easyInit() else {
                        exchange.finish(code: 0, curl: curl, error: URLError(.cannotLoadFromNetwork))
                        continue
                    }
                    if let error = exchange.attach(easy, curl: curl) ?? addFailure(curl.multiAddHandle(multi.pointer, easy)) {
                        curl.easyReset(easy)
                        pool.append(easy)
                        exchange.finish(code: 0, curl: curl, error: error)
                        continue
                    }
                    running[exchange.id] = exchange
                    byHandle[easy] = exchange
                }
                let ended = stopping ? Array(running.keys) : cancels
                for id in ended {
                    guard let exchange = running.removeValue(forKey: id), let easy = exchange.easy else { continue }
                    _ = curl.multiRemoveHandle(multi.pointer, easy)
                    byHandle[easy] = nil
                    recycle(easy, into: &pool)
                    exchange.finish(code: 0, curl: curl, error: URLError(.cancelled))
                }
                if stopping {
                    pool.forEach { curl.easyCleanup($0) }
                    _ = curl.multiCleanup(multi.pointer)
                    return
                }
                _ = curl.multiPerform(multi.pointer, &stillRunning)
                var queued: Int32 = 0
                while let message = curl.multiInfoRead(multi.pointer, &queued) {
                    // CURLMsg: msg (int) at 0, easy_handle at 8, data.result (CURLcode) at 16.
                    guard message.load(as: Int32.self) == LibCurl.messageDone,
                          let easy = message.load(fromByteOffset: 8, as: UnsafeMutableRawPointer?.self) else { continue }
                    let code = message.load(fromByteOffset: 16, as: Int32.self)
                    _ = curl.multiRemoveHandle(multi.pointer, easy)
                    guard let exchange = byHandle.removeValue(forKey: easy) else { continue }
                    running[exchange.id] = nil
                    exchange.finish(code: code, curl: curl)
                    recycle(easy, into: &pool)
                }
                let idle = inbox.withLock { inbox -> Bool in
                    guard inbox.submissions.isEmpty, inbox.cancels.isEmpty, !inbox.stopping else { return false }
                    inbox.sleeping = true
                    return true
                }
                if idle {
                    _ = curl.multiPoll(multi.pointer, nil, 0, running.isEmpty ? 1000 : Self.activePollMilliseconds, nil)
                }
            }
        }

        private func addFailure(_ code: Int32) -> URLError? {
            code == 0 ? nil : URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "curl_multi_add_handle failed (\(code))"])
        }

        /// Resets a finished handle for the next exchange (its connection stays in the multi
        /// handle's cache either way), keeping at most 64.
        private func recycle(_ easy: LibCurl.Handle, into pool: inout [LibCurl.Handle]) {
            if pool.count < 64 {
                curl.easyReset(easy)
                pool.append(easy)
            } else {
                curl.easyCleanup(easy)
            }
        }
    }
}

/// The multi handle, shared with other threads only for `curl_multi_wakeup` (documented thread-safe).
// Sendable: every other use of the pointer happens on the loop thread.
private struct MultiHandle: @unchecked Sendable {
    let pointer: LibCurl.Handle
}

/// An exchange of a `CurlTransport`, to cancel it.
private struct CurlTask: TransportTask {
    let id: UInt64
    weak var transport: CurlTransport?
    func cancel() { transport?.cancel(id) }
}
#endif
