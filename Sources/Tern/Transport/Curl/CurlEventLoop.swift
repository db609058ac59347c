#if canImport(Glibc) || canImport(Musl)
import CTernCurl
import Foundation

/// The loop thread of a `CurlTransport`: owns the multi handle, every easy handle and every
/// exchange once submitted. Created inside the thread and never shared (not `Sendable`).
///
/// Each turn it takes the inbox (submissions, cancels, stop) under one lock, starts what it may,
/// runs `curl_multi_perform`, finishes what libcurl reports done, and sleeps in
/// `curl_multi_poll` when the inbox is empty (a submitter then wakes it through `CurlWakeup`).
///
/// **A FIFO queue per origin.** libcurl's own queue of transfers waiting for a connection is not
/// first-in first-out (a newly added transfer can take a freed connection before older ones), so
/// with more requests than connections a few waited 60–70 ms while the median waited 1 ms. The
/// loop hands libcurl at most `connectionsPerHost` transfers per origin (scheme, host, port) and
/// keeps the rest in arrival order; an origin that answered over HTTP/2 takes up to 100 streams
/// per connection.
final class CurlEventLoop {
    private let curl: LibCurl
    private let multi: LibCurl.Handle
    private let wakeup: CurlWakeup
    /// The wakeup's eventfd as a `struct curl_waitfd` (fd, events, revents: 4 + 2 + 2 bytes), an
    /// extra descriptor for `curl_multi_poll`; nil without one.
    private let waitDescriptor: UnsafeMutableRawPointer?
    private let inbox: Locked<CurlTransport.Inbox>
    private let executor: CurlLoopExecutor
    private let connectionsPerHost: Int

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

    init(curl: LibCurl, wakeup: CurlWakeup, inbox: Locked<CurlTransport.Inbox>, executor: CurlLoopExecutor, connectionsPerHost: Int) {
        self.curl = curl
        multi = wakeup.multi
        self.wakeup = wakeup
        if wakeup.descriptor >= 0 {
            let waitFD = UnsafeMutableRawPointer.allocate(byteCount: 8, alignment: 4)
            waitFD.storeBytes(of: wakeup.descriptor, toByteOffset: 0, as: Int32.self)
            waitFD.storeBytes(of: Int16(POLLIN), toByteOffset: 4, as: Int16.self)
            waitFD.storeBytes(of: 0, toByteOffset: 6, as: Int16.self)
            waitDescriptor = waitFD
        } else {
            waitDescriptor = nil
        }
        self.inbox = inbox
        self.executor = executor
        self.connectionsPerHost = connectionsPerHost
    }

    func run() {
        var stillRunning: Int32 = 0
        while true {
            let (submissions, cancels, pauses, jobs, stopping) = inbox.withLock { inbox in
                defer { inbox.submissions = []; inbox.cancels = []; inbox.pauses = []; inbox.jobs = []; inbox.sleeping = false }
                return (inbox.submissions, inbox.cancels, inbox.pauses, inbox.jobs, inbox.stopping)
            }
            submissions.forEach(admit)
            if stopping {
                jobs.forEach(CurlLoopExecutor.runElsewhere)
                return stop()
            }
            cancels.forEach(cancel)
            for (id, paused) in pauses {
                // Resuming hands over what libcurl held back, through the write callback, here.
                if let easy = running[id]?.easy { _ = curl.easyPause(easy, paused ? LibCurl.pauseReceiving : LibCurl.pauseNothing) }
            }
            // Tasks that prefer this thread (`CurlTransport.taskExecutor`); what they send is
            // admitted next turn, without a wakeup.
            let loopExecutor = executor.asUnownedTaskExecutor()
            for job in jobs { job.runSynchronously(on: loopExecutor) }
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
                guard inbox.submissions.isEmpty, inbox.cancels.isEmpty, inbox.pauses.isEmpty, inbox.jobs.isEmpty, !inbox.stopping else {
                    return false
                }
                inbox.sleeping = true
                return true
            }
            if idle { sleep() }
        }
    }

    /// Waits in `curl_multi_poll` for libcurl's sockets or a wakeup, at most a second (while
    /// transfers run, `activePollMilliseconds`).
    private func sleep() {
        let timeout = running.isEmpty ? 1000 : Self.activePollMilliseconds
        guard let waitDescriptor else {
            _ = curl.multiPoll(multi, nil, 0, timeout, nil)
            return
        }
        waitDescriptor.storeBytes(of: 0, toByteOffset: 6, as: Int16.self)
        _ = curl.multiPoll(multi, waitDescriptor, 1, timeout, nil)
        if waitDescriptor.load(fromByteOffset: 6, as: Int16.self) != 0 { tern_wakeup_clear(wakeup.descriptor) }
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
        _ = curl.multiCleanup(multi)  // nothing calls curl_multi_wakeup once `stopping` is seen (CurlWakeup)
        waitDescriptor?.deallocate()
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
