#if canImport(Glibc) || canImport(Musl)
import CTernCurl
import Foundation

/// The engine of a `CurlTransport`: owns the multi handle, every easy handle and every exchange
/// once submitted, and drives libcurl through its socket interface (`curl_multi_socket_action`)
/// over an epoll set that libcurl's socket callback keeps in step (CTernCurl).
///
/// One lock, `driver`, serialises every libcurl call and every table here. The loop thread takes
/// the inbox (submissions, cancels, pauses, stop) under the inbox's lock, then does its work with
/// `driver` held: starts what it may, acts on the sockets epoll reported and on libcurl's due
/// timers, finishes what libcurl reports done. It lets go of `driver` to run the task executor's
/// jobs and to wait in `epoll_wait` (a submitter wakes it through the transport's eventfd).
///
/// **Starting without a wake-up.** While the loop waits, a caller starting a plain-HTTP exchange
/// takes `driver` itself when it is free (`startDirectly`) and lets libcurl send the request from
/// the caller's thread; the socket then waits for the answer in the same epoll set, so only the
/// answer wakes the loop: one context switch per sequential request fewer. libcurl's callbacks
/// for that exchange may then run on the caller's thread, always with `driver` held.
///
/// **A FIFO queue per origin.** libcurl's own queue of transfers waiting for a connection is not
/// first-in first-out (a newly added transfer can take a freed connection before older ones), so
/// with more requests than connections a few waited 60–70 ms while the median waited 1 ms. The
/// loop hands libcurl at most `connectionsPerHost` transfers per origin (scheme, host, port) and
/// keeps the rest in arrival order; an origin that answered over HTTP/2 takes up to 100 streams
/// per connection.
// Sendable: every stored property is immutable or guarded by `driver` (the tables, `wakesAt`,
// `stopped`); `ready` and `readyMasks` belong to the loop thread.
final class CurlEventLoop: @unchecked Sendable {
    private let curl: LibCurl
    private let multi: LibCurl.Handle
    private let wakeup: CurlWakeup
    private let inbox: Locked<CurlTransport.Inbox>
    private let executor: CurlLoopExecutor
    private let connectionsPerHost: Int
    /// Serialises every libcurl call and every table below.
    private let driver = NSLock()
    /// The epoll descriptor libcurl's socket callback keeps its sockets in.
    private let watch: UnsafeMutablePointer<tern_curl_watch>

    /// While transfers run, the loop wakes at least this often and drives every transfer (a
    /// stall in libcurl 7.88's HTTP/2 code left transfers waiting for the whole wait otherwise).
    static let activePollMilliseconds: Int64 = 20
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
    /// When the waiting loop wakes by itself (monotonic nanoseconds).
    private var wakesAt: Int64 = 0
    /// Set once the multi handle is gone.
    private var stopped = false
    /// What the last wait reported: descriptors and their `CURL_CSELECT_*` masks.
    private var ready = [Int32](repeating: 0, count: 64)
    private var readyMasks = [Int32](repeating: 0, count: 64)

    /// A loop over `multi`, or nil when no epoll descriptor can be made.
    init?(
        curl: LibCurl, multi: LibCurl.Handle, wakeup: CurlWakeup, inbox: Locked<CurlTransport.Inbox>, executor: CurlLoopExecutor,
        connectionsPerHost: Int
    ) {
        let epoll = tern_epoll_open()
        guard epoll >= 0 else { return nil }
        guard tern_epoll_watch_input(epoll, wakeup.descriptor) == 0 else {
            close(epoll)
            return nil
        }
        watch = .allocate(capacity: 1)
        watch.initialize(to: tern_curl_watch(epoll: epoll))
        curl.install(watch, on: multi)
        self.curl = curl
        self.multi = multi
        self.wakeup = wakeup
        self.inbox = inbox
        self.executor = executor
        self.connectionsPerHost = connectionsPerHost
    }

    deinit {
        close(watch.pointee.epoll)
        watch.deallocate()
    }

    /// The loop thread's work, until the transport stops.
    func run() {
        var readyCount = 0
        var waitRanOut = false
        while true {
            let (submissions, cancels, pauses, jobs, stopping) = inbox.withLock { inbox in
                defer { inbox.submissions = []; inbox.cancels = []; inbox.pauses = []; inbox.jobs = []; inbox.sleeping = false }
                return (inbox.submissions, inbox.cancels, inbox.pauses, inbox.jobs, inbox.stopping)
            }
            driver.lock()
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
                if let easy = running[id]?.easy { _ = curl.easyPause(easy, paused ? LibCurl.pauseReceiving : LibCurl.pauseNothing) }
            }
            if !jobs.isEmpty {
                // Tasks that prefer this thread (`CurlTransport.taskExecutor`) run without the
                // lock; what they send is admitted next turn, without a wakeup.
                driver.unlock()
                let loopExecutor = executor.asUnownedTaskExecutor()
                for job in jobs { job.runSynchronously(on: loopExecutor) }
                driver.lock()
            }
            act(on: readyCount, waitRanOut: waitRanOut)
            finishDone()
            let idle = inbox.withLock { inbox -> Bool in
                guard inbox.submissions.isEmpty, inbox.cancels.isEmpty, inbox.pauses.isEmpty, inbox.jobs.isEmpty, !inbox.stopping else {
                    return false
                }
                inbox.sleeping = true
                return true
            }
            let timeout = idle ? waitMilliseconds() : 0
            wakesAt = tern_monotonic_now() + timeout * 1_000_000
            driver.unlock()
            readyCount = Int(tern_epoll_wait(watch.pointee.epoll, &ready, &readyMasks, Int32(ready.count), Int32(timeout)))
            waitRanOut = readyCount == 0 && timeout > 0
        }
    }

    /// Hands `exchange` to libcurl from the caller's thread, which then sends its request, if
    /// the loop's lock is free; false when it is not (the caller posts it to the inbox instead).
    /// Wakes the loop only when it must: an exchange ended here (the loop delivers endings), or
    /// libcurl wants its timers sooner than the loop would wake.
    func startDirectly(_ exchange: CurlExchange) -> Bool {
        guard driver.try() else { return false }
        guard !stopped else {
            driver.unlock()
            return false
        }
        admit(exchange)
        var stillRunning: Int32 = 0
        _ = curl.socketAction(multi, LibCurl.socketTimeout, 0, running: &stillRunning)
        let timer = timerMilliseconds()
        let wake = Int(stillRunning) < running.count || (timer >= 0 && tern_monotonic_now() + timer * 1_000_000 < wakesAt)
        driver.unlock()
        if wake { wakeup.post(to: inbox) { _ in } }
        return true
    }

    /// With `driver` held: acts on the `count` descriptors the last wait reported, then on
    /// libcurl's timers when they are due, or on every transfer when the wait ran out while
    /// transfers run (`activePollMilliseconds`).
    private func act(on count: Int, waitRanOut: Bool) {
        var stillRunning: Int32 = 0
        var sockets = 0
        for index in 0..<count {
            if ready[index] == wakeup.descriptor {
                tern_wakeup_clear(wakeup.descriptor)
            } else {
                sockets += 1
                _ = curl.socketAction(multi, ready[index], readyMasks[index], running: &stillRunning)
            }
        }
        if sockets == 0, waitRanOut, !running.isEmpty {
            _ = curl.socketAll(multi, running: &stillRunning)
            return
        }
        if timerMilliseconds() == 0 {
            _ = curl.socketAction(multi, LibCurl.socketTimeout, 0, running: &stillRunning)
        }
    }

    /// With `driver` held: ends every exchange libcurl reports done.
    private func finishDone() {
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
    }

    /// How long the loop may wait: until libcurl's next timer, at most a second (while transfers
    /// run, `activePollMilliseconds`).
    private func waitMilliseconds() -> Int64 {
        let cap = running.isEmpty ? 1000 : Self.activePollMilliseconds
        let timer = timerMilliseconds()
        return timer < 0 ? cap : min(cap, timer)
    }

    /// Milliseconds until libcurl wants its timers run (`curl_multi_timeout`; 0: now), -1 for none.
    private func timerMilliseconds() -> Int64 {
        var milliseconds = -1
        _ = curl.multiTimeout(multi, &milliseconds)
        return Int64(milliseconds)
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
