#if canImport(Glibc) || canImport(Musl)
import CTernCurl
import Foundation

/// The engine of a `CurlTransport`: owns the multi handle, every easy handle and every exchange
/// once submitted; its thread drives them.
///
/// Each turn the loop thread takes the inbox (submissions, cancels, pauses, stop) under the
/// inbox's lock, then, holding `driver`, starts what it may, runs `curl_multi_perform`, finishes
/// what libcurl reports done, and sleeps when the inbox is empty (a submitter then wakes it
/// through `CurlWakeup`): in `curl_multi_poll` while transfers run, `driver` still held; with none
/// running, in `epoll_wait` on the wakeup with `driver` released.
///
/// **Sending without a wake-up.** While the loop waits with nothing running, a caller sending a
/// plain-HTTP request takes `driver` itself if it is free (`startDirectly`) and runs
/// `curl_multi_perform` on its own thread, which sends the request. When libcurl then waits for
/// nothing but input on one socket (the request went out whole), the caller adds that socket to
/// the loop's epoll set (once, for input), so only the answer wakes the loop: sequentially, one
/// context switch per request fewer. In every other case (the request not all sent, a transfer
/// that already ended, a libcurl timer due before the loop would wake) it wakes the loop at once,
/// as a queued submission would. libcurl's callbacks may then run on the caller's thread, with
/// `driver` held, but the events they make are held back and delivered by the loop thread.
///
/// **A FIFO queue per origin.** libcurl's own queue of transfers waiting for a connection is not
/// first-in first-out (a newly added transfer can take a freed connection before older ones), so
/// with more requests than connections a few waited 60–70 ms while the median waited 1 ms. The
/// loop hands libcurl at most `connectionsPerHost` transfers per origin (scheme, host, port) and
/// keeps the rest in arrival order; an origin that answered over HTTP/2 takes up to 100 streams
/// per connection.
// Sendable: every stored property is immutable or guarded by `driver` (the tables, the direct
// sockets, `waitsIdle`, `wakesAt`, `stopped`).
final class CurlEventLoop: @unchecked Sendable {
    private let curl: LibCurl
    private let multi: LibCurl.Handle
    private let wakeup: CurlWakeup
    /// The wakeup's eventfd as a `struct curl_waitfd` (fd, events, revents: 4 + 2 + 2 bytes), an
    /// extra descriptor for `curl_multi_poll`.
    private let waitDescriptor: UnsafeMutableRawPointer
    /// Where the loop waits with nothing running: the wakeup, and the sockets of requests sent
    /// directly.
    private let epoll: Int32
    private let inbox: Locked<CurlTransport.Inbox>
    private let executor: CurlLoopExecutor
    private let connectionsPerHost: Int
    /// Serialises every libcurl call and every table below.
    private let driver = NSLock()
    /// The longest sleep with nothing running.
    private let idleWaitMilliseconds: Int32

    /// While transfers run, the loop wakes at least this often (a stall in libcurl 7.88's HTTP/2
    /// code left transfers waiting for the whole poll timeout otherwise).
    static let activePollMilliseconds: Int32 = 20
    /// Streams per connection on an HTTP/2 origin (libcurl's default concurrency limit).
    static let streamsPerConnection = 100

    /// Exchanges handed to libcurl, by id and by easy handle.
    private var running: [UInt64: CurlExchange] = [:]
    private var byHandle: [UnsafeMutableRawPointer: CurlExchange] = [:]
    /// Exchanges waiting for their origin's turn, oldest first (`head` indexes the next one).
    private var waiting: [String: (queue: [CurlExchange], head: Int)] = [:]
    /// Exchanges handed to libcurl per origin.
    private var active: [String: Int] = [:]
    /// Origins that answered over HTTP/2.
    private var multiplexed: Set<String> = []
    /// Reset easy handles for the next exchanges.
    private var pool: [LibCurl.Handle] = []
    /// Sockets a caller added to `epoll` for the loop's idle wait (`startDirectly`).
    private var directSockets: [Int32] = []
    /// Exchanges with events kept back while a caller drove libcurl, for the loop to deliver.
    private var heldBack: [CurlExchange] = []
    /// Whether the loop waits in `epoll` with nothing running (and `driver` released).
    private var waitsIdle = false
    /// When that wait ends by itself (monotonic nanoseconds).
    private var wakesAt: Int64 = 0
    /// Set once the multi handle is gone.
    private var stopped = false
    /// Requests a caller sent without waking the loop, and requests it could not because
    /// `curl_multi_fdset` cannot report their socket (for tests).
    private var sentDirectly = 0
    private var socketBeyondFDSet = 0

    /// A loop over `multi`, or nil when no epoll descriptor can be made.
    init?(
        curl: LibCurl, multi: LibCurl.Handle, wakeup: CurlWakeup, inbox: Locked<CurlTransport.Inbox>, executor: CurlLoopExecutor,
        connectionsPerHost: Int, idleWaitMilliseconds: Int32
    ) {
        epoll = tern_epoll_open(wakeup.descriptor)
        guard epoll >= 0 else { return nil }
        waitDescriptor = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 4)
        waitDescriptor.storeBytes(of: wakeup.descriptor, toByteOffset: 0, as: Int32.self)
        waitDescriptor.storeBytes(of: Int16(POLLIN), toByteOffset: 4, as: Int16.self)
        waitDescriptor.storeBytes(of: 0, toByteOffset: 6, as: Int16.self)
        self.curl = curl
        self.multi = multi
        self.wakeup = wakeup
        self.inbox = inbox
        self.executor = executor
        self.connectionsPerHost = connectionsPerHost
        self.idleWaitMilliseconds = idleWaitMilliseconds
    }

    deinit {
        close(epoll)
        waitDescriptor.deallocate()
    }

    /// The loop thread's work, until the transport stops.
    func run() {
        var stillRunning: Int32 = 0
        while true {
            var (submissions, cancels, pauses, bodiesReady, jobs, stopping) = inbox.withLock { inbox in
                defer {
                    (inbox.submissions, inbox.cancels, inbox.pauses, inbox.bodiesReady, inbox.jobs) = ([], [], [], [], [])
                    inbox.sleeping = false
                }
                return (inbox.submissions, inbox.cancels, inbox.pauses, inbox.bodiesReady, inbox.jobs, inbox.stopping)
            }
            driver.lock()
            waitsIdle = false
            for socket in directSockets { tern_epoll_forget(epoll, socket) }
            directSockets.removeAll(keepingCapacity: true)
            for exchange in heldBack { exchange.releaseEvents(curl: curl) }
            heldBack.removeAll()
            submissions.forEach(admit)
            if stopping {
                stop()
                driver.unlock()
                jobs.forEach(CurlLoopExecutor.runElsewhere)
                return
            }
            cancels.forEach(cancel)
            for (id, paused) in pauses {
                // Resuming hands over what libcurl held back, through the write callback, here.
                running[id]?.setReceivePaused(paused, curl: curl)
            }
            for id in bodiesReady { running[id]?.resumeSending(curl: curl) }
            if !jobs.isEmpty {
                // Tasks that prefer this thread (`CurlTransport.taskExecutor`) run without the
                // lock; what they send is admitted next turn, without a wakeup.
                driver.unlock()
                let loopExecutor = executor.asUnownedTaskExecutor()
                for job in jobs { job.runSynchronously(on: loopExecutor) }
                driver.lock()
            }
            // Nothing taken from the inbox outlives this turn: an exchange that ended in it must
            // not be kept (with what its request captured) through the idle wait below.
            (submissions, cancels, pauses, bodiesReady, jobs) = ([], [], [], [], [])
            _ = curl.multiPerform(multi, &stillRunning)
            var queued: Int32 = 0
            while let message = curl.multiInfoRead(multi, &queued) {
                // CURLMsg: msg (int) at 0, easy_handle at 8, data.result (CURLcode) at 16.
                guard message.load(as: Int32.self) == LibCurl.messageDone,
                    let easy = message.load(fromByteOffset: 8, as: UnsafeMutableRawPointer?.self)
                else { continue }
                let code = message.load(fromByteOffset: 16, as: Int32.self)
                guard let exchange = byHandle[easy] else {
                    _ = curl.multiRemoveHandle(multi, easy)
                    continue
                }
                end(exchange) { $0.finish(code: code, curl: curl) }
            }
            let idle = inbox.withLock { inbox -> Bool in
                guard inbox.submissions.isEmpty, inbox.cancels.isEmpty, inbox.pauses.isEmpty, inbox.bodiesReady.isEmpty,
                    inbox.jobs.isEmpty, !inbox.stopping
                else {
                    return false
                }
                inbox.sleeping = true
                return true
            }
            guard idle else {
                driver.unlock()
                continue
            }
            guard running.isEmpty else {
                poll()
                driver.unlock()
                continue
            }
            // Nothing runs: wait without the lock, so that a caller can send a request itself.
            let timer = timerMilliseconds()
            let timeout = timer < 0 ? idleWaitMilliseconds : min(idleWaitMilliseconds, timer)
            waitsIdle = true
            wakesAt = tern_monotonic_now() + Int64(timeout) * 1_000_000
            driver.unlock()
            _ = tern_epoll_wait(epoll, wakeup.descriptor, timeout)
        }
    }

    /// Hands `exchange` to libcurl from the caller's thread, which sends its request, if the loop
    /// waits with nothing running and its lock is free; false otherwise (the caller then posts it
    /// to the inbox). Wakes the loop unless only the answer is left to wait for.
    func startDirectly(_ exchange: CurlExchange) -> Bool {
        guard driver.try() else { return false }
        guard waitsIdle, !stopped else {
            driver.unlock()
            return false
        }
        // Every event goes out from the loop thread: callbacks never run inside the caller's `send`.
        exchange.holdEvents()
        running.values.forEach { $0.holdEvents() }
        admit(exchange)
        var stillRunning: Int32 = 0
        _ = curl.multiPerform(multi, &stillRunning)
        var driven = Array(running.values)
        if running[exchange.id] == nil { driven.append(exchange) }  // queued, or failed to start
        var eventsHeld = false
        for held in driven where held.stopHolding() {
            heldBack.append(held)
            eventsHeld = true
        }
        var wake = true
        // Only the answer is left when this is the one transfer, still running (nothing ended for
        // the loop to deliver), waiting on one socket for input alone, and libcurl wants nothing
        // before the loop wakes anyway.
        if !eventsHeld, stillRunning == 1, running.count == 1, running[exchange.id] != nil {
            let socket = curl.singleInputSocket(multi)
            if socket == -2 { socketBeyondFDSet += 1 }
            let timer = timerMilliseconds()
            if socket >= 0, timer < 0 || tern_monotonic_now() + Int64(timer) * 1_000_000 >= wakesAt,
                tern_epoll_watch_once(epoll, socket) == 0
            {
                directSockets.append(socket)
                sentDirectly += 1
                wake = false
            }
        }
        driver.unlock()
        if wake { wakeup.post(to: inbox) { _ in } }
        return true
    }

    /// Exchanges waiting for a connection, by origin.
    var queuedByOrigin: [String: Int] {
        driver.withLock { waiting.filter { $0.value.queue.count > $0.value.head }.mapValues { $0.queue.count - $0.head } }
    }

    /// How many requests callers sent without waking the loop, and how many they could not
    /// because the socket's number was too high for `curl_multi_fdset`.
    var directSends: (sent: Int, socketBeyondFDSet: Int) { driver.withLock { (sentDirectly, socketBeyondFDSet) } }

    /// Waits in `curl_multi_poll` for libcurl's sockets or a wakeup, at most
    /// `activePollMilliseconds`.
    private func poll() {
        waitDescriptor.storeBytes(of: 0, toByteOffset: 6, as: Int16.self)
        _ = curl.multiPoll(multi, waitDescriptor, 1, Self.activePollMilliseconds, nil)
        if waitDescriptor.load(fromByteOffset: 6, as: Int16.self) != 0 { tern_wakeup_clear(wakeup.descriptor) }
    }

    /// Milliseconds until libcurl wants to run (`curl_multi_timeout`; 0: now), -1 for never.
    private func timerMilliseconds() -> Int32 {
        var milliseconds = -1
        _ = curl.multiTimeout(multi, &milliseconds)
        return Int32(clamping: milliseconds)
    }

    /// Starts `exchange` now if its origin has room, else queues it behind the others.
    private func admit(_ exchange: CurlExchange) {
        let origin = exchange.origin
        if active[origin, default: 0] < limit(origin), waiting[origin] == nil {
            start(exchange)
        } else {
            waiting[origin, default: ([], 0)].queue.append(exchange)
        }
    }

    /// How many transfers of `origin` libcurl may have at once.
    private func limit(_ origin: String) -> Int {
        multiplexed.contains(origin) ? connectionsPerHost * Self.streamsPerConnection : connectionsPerHost
    }

    /// Hands `exchange` to libcurl, or finishes it with the reason it cannot start.
    private func start(_ exchange: CurlExchange) {
        guard let easy = pool.popLast() ?? curl.easyInit() else {
            return exchange.finish(code: 0, curl: curl, error: URLError(.cannotLoadFromNetwork))
        }
        if let error = exchange.attach(easy, curl: curl) ?? Self.addFailure(curl.multiAddHandle(multi, easy)) {
            recycle(easy)
            return exchange.finish(code: 0, curl: curl, error: error)
        }
        running[exchange.id] = exchange
        byHandle[easy] = exchange
        active[exchange.origin, default: 0] += 1
    }

    /// Takes `exchange` out of libcurl, recycles its handle, lets `finish` complete it, and
    /// starts the next exchange waiting for its origin.
    private func end(_ exchange: CurlExchange, _ finish: (CurlExchange) -> Void) {
        guard let easy = exchange.easy, running.removeValue(forKey: exchange.id) != nil else { return }
        _ = curl.multiRemoveHandle(multi, easy)
        byHandle[easy] = nil
        finish(exchange)  // before the handle is reset: finishing reads its metrics
        recycle(easy)
        let origin = exchange.origin
        if exchange.spokeHTTP2 { multiplexed.insert(origin) }
        active[origin, default: 1] -= 1
        if active[origin] == 0 { active[origin] = nil }
        startWaiting(origin)
    }

    /// Starts waiting exchanges of `origin` while it has room, oldest first.
    private func startWaiting(_ origin: String) {
        while active[origin, default: 0] < limit(origin), var line = waiting.removeValue(forKey: origin) {
            let next = line.queue[line.head]
            line.head += 1
            if line.head < line.queue.count {
                // Started exchanges leave the array once they are half of it (a queue that never
                // drains must not keep every exchange it ever held).
                if line.head >= 32, line.head * 2 >= line.queue.count {
                    line.queue.removeFirst(line.head)
                    line.head = 0
                }
                waiting[origin] = line
            }
            start(next)
        }
    }

    /// Cancels exchange `id`, running or waiting: it completes with `URLError(.cancelled)`.
    private func cancel(_ id: UInt64) {
        if let exchange = running[id] {
            return end(exchange) { $0.finish(code: 0, curl: curl, error: URLError(.cancelled)) }
        }
        for (origin, line) in waiting {
            guard let index = line.queue[line.head...].firstIndex(where: { $0.id == id }) else { continue }
            var remaining = line
            let exchange = remaining.queue.remove(at: index)
            waiting[origin] = remaining.head == remaining.queue.count ? nil : remaining
            return exchange.finish(code: 0, curl: curl, error: URLError(.cancelled))
        }
    }

    /// Cancels everything, running and waiting, and frees every handle.
    private func stop() {
        let queued = waiting.values.flatMap { $0.queue[$0.head...] }
        waiting = [:]  // before ending the running ones, which would start them
        for exchange in Array(running.values) {
            end(exchange) { $0.finish(code: 0, curl: curl, error: URLError(.cancelled)) }
        }
        queued.forEach { $0.finish(code: 0, curl: curl, error: URLError(.cancelled)) }
        pool.forEach { curl.easyCleanup($0) }
        pool = []
        _ = curl.multiCleanup(multi)
        stopped = true
    }

    private static func addFailure(_ code: Int32) -> URLError? {
        code == 0 ? nil : URLError(.unknown, userInfo: [NSLocalizedDescriptionKey: "curl_multi_add_handle failed (\(code))"])
    }

    /// Resets a finished handle for the next exchange (its connection stays in the multi
    /// handle's cache either way), keeping at most 64.
    private func recycle(_ easy: LibCurl.Handle) {
        if pool.count < 64 {
            curl.easyReset(easy)
            pool.append(easy)
        } else {
            curl.easyCleanup(easy)
        }
    }
}
#endif
