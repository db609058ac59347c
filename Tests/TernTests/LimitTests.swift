import Foundation
import Testing
@testable import Tern
import TernStubs

/// The response size limit and a cancel that never blocks, against the fixture's `/huge`: a body
/// announced at 2 GB, or sent chunked without end.
@Suite(.serialized) struct LimitTests {
    private func client(limit: Int?, delivery: URLSessionTransport.Delivery = .streamed) throws -> Client {
        try Client(baseURL: TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.maximumResponseSize = limit
            $0.transportSettings.urlSession.delivery = delivery
            $0.timeout = 30
        }
    }

    @Test func anAnnouncedBodyOverTheLimitIsRefusedAtOnce() async throws {
        let client = try client(limit: 1 << 20)
        let (result, seconds) = await client.timedResult(Request<Data>("huge", query: ["announce": 2_147_483_648]))
        guard case .responseTooLarge(let limit)? = result.failure else { Issue.record("got \(result)"); return }
        #expect(limit == 1 << 20)
        #expect(seconds < 10)
    }

    @Test(arguments: [URLSessionTransport.Delivery.streamed, .buffered])
    func anUnannouncedBodyIsStoppedAsItCrossesTheLimit(delivery: URLSessionTransport.Delivery) async throws {
        // Buffered delivery can only check the length it announces: an endless chunked body would
        // be buffered whole, so that mode is tested with an announced body only.
        let client = try client(limit: 1 << 20, delivery: delivery)
        let query: Parameters = delivery == .streamed ? ["chunked": 1] : ["announce": 4 << 20]
        let (result, _) = await client.timedResult(Request<Data>("huge", query: query))
        #expect(result.failure?.description == "The response is larger than the limit of 1048576 bytes", "\(result)")
    }

    @Test func aRequestCanRaiseOrLiftItsClientsLimit() async throws {
        let client = try client(limit: 10)
        var request = Request<Data>(try TestServers.fixture() + "/pattern", query: ["n": 5000])
        await #expect(throws: TernError.self) { try await client.send(request) }
        request.maximumResponseSize = Int.max
        #expect(try await client.send(request).data.count == 5000)
        request.maximumResponseSize = 5000
        #expect(try await client.send(request).data.count == 5000)
    }

    @Test func stubsEnforceTheLimitToo() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/big"), .data(Data(repeating: 9, count: 300)))
        let client = Client(baseURL: "https://stub.example") {
            $0.transport = stubs; $0.maximumResponseSize = 100; $0.callbackQueue = .immediate
        }
        let error = await #expect(throws: TernError.self) { try await client.send(Request<Data>("big")) }
        #expect(error.map { if case .responseTooLarge(100) = $0 { true } else { false } } == true)
    }

    /// Twenty fast downloads of 2 GB (no limit), each cancelled from the main queue once it has
    /// received a megabyte: `cancel()` returns at once and the `.cancelled` callback follows.
    @Test func cancellingFastLargeDownloadsNeverBlocksTheMainQueue() async throws {
        let client = try client(limit: nil)
        let before = Self.residentMegabytes()
        var timings: [(cancel: Double, callback: Double)] = []
        for _ in 0..<20 {
            let received = Locked<Int64>(0)
            let ended = Locked<Date?>(nil)
            var request = Request<Data>("huge", query: ["announce": 2_147_483_648])
            request.progress = { progress in received.withLock { $0 = progress.completedBytes } }
            request.callbackQueue = .main
            let outcome = Locked<String>("")
            let handle = client.send(request) { result in
                outcome.withLock { $0 = String(describing: result.failure) }
                if result.failure?.isCancelled == true { ended.withLock { $0 = Date() } }
            }
            var deadline = Date().addingTimeInterval(10)
            while received.withLock({ $0 }) < 1 << 20, Date() < deadline { try await Task.sleep(milliseconds: 2) }
            deadline = Date().addingTimeInterval(10)
            let (started, returned) = await MainActor.run { () -> (Date, Date) in
                let started = Date()
                handle.cancel()
                return (started, Date())
            }
            while ended.withLock({ $0 }) == nil, Date() < deadline { try await Task.sleep(milliseconds: 1) }
            let callback = ended.withLock { $0 }?.timeIntervalSince(started) ?? .infinity
            timings.append((returned.timeIntervalSince(started), callback))
            #expect(outcome.withLock { $0 }.contains("cancelled"), "\(outcome.withLock { $0 })")
        }
        let cancels = timings.map(\.cancel).sorted()
        let callbacks = timings.map(\.callback).sorted()
        print("RSS +\(Int(Self.residentMegabytes() - before)) MB after 20 cancelled 2 GB downloads")
        print(
            "cancel() returned in \(cancels.map { String(format: "%.2f ms", $0 * 1000) }); callbacks in \(callbacks.map { String(format: "%.1f ms", $0 * 1000) })"
        )
        #expect(cancels[cancels.count / 2] < 0.005 && cancels.last! < 0.05)
        #expect(callbacks[callbacks.count / 2] < 0.05 && callbacks.last! < 1)
        // The whole process's memory, other suites running beside this one: a loose bound that a
        // leak of the downloads (20 × 2 GB) would still cross.
        #expect(Self.residentMegabytes() - before < 1000)
    }

    /// A body crossing the limit right after a gzip bomb was stopped at it still ends at once.
    /// Over libcurl it does (about 0.1 s for the 5 MB a loopback server sends first). URLSession on
    /// Linux cannot: after Tern stopped the bomb, FoundationNetworking inflates and delivers the
    /// rest of its 1 GB anyway (3.6 s of CPU against 0.09 s for a plain stop, measured) on the
    /// session's work queue, and the next request's task is created and resumed only when that
    /// queue is free (4.5 s in a run of the heavy pass); nothing in URLSession's API stops it
    /// sooner. `send` itself returns at once (`sendNeverBlocksAfterALargeBodyWasStopped`).
    @Test func theLimitEndsARequestAtOnceEvenRightAfterAGzipBomb() async throws {
        let client = try client(limit: 5 << 20)
        let bomb = await client.completionResult(Request<Data>("gzip-bomb", query: ["mb": 1024])).0
        #expect(bomb.failure == .responseTooLarge(limit: 5 << 20))
        let started = Date()
        let endless = await client.completionResult(Request<Data>("huge", query: ["chunked": 1])).0
        let seconds = Date().timeIntervalSince(started)
        #expect(endless.failure == .responseTooLarge(limit: 5 << 20))
        print("an endless body right after a gzip bomb reached the limit in \(String(format: "%.0f", seconds * 1000)) ms")
        #if os(Linux)
        if client.transport is URLSessionTransport {
            withKnownIssue("FoundationNetworking finishes the stopped bomb first") { #expect(seconds < 1) }
            return
        }
        #endif
        #expect(seconds < 1)
    }

    /// `send` returns at once right after a fast 2 GB download was cancelled mid-body, and right
    /// after a gzip bomb was stopped at its limit, while the transport's queues are still busy
    /// with what had been read (URLSession on Linux inflates the rest of the bomb): twenty `send`
    /// calls after each, every one timed on its own, none over 5 ms (20 ms under ThreadSanitizer).
    /// The best of three tries: on two shared cores one call was once preempted for 6.5 ms; a
    /// `send` that waits for the transport waits in every try (4.8 s after a bomb, it was).
    @Test(arguments: ["cancelled download", "gzip bomb"])
    func sendNeverBlocksAfterALargeBodyWasStopped(_ situation: String) async throws {
        let bound: Double = Self.isUnderThreadSanitizer ? 20 : 5
        var tries: [[Double]] = []
        for _ in 0..<3 {
            let durations = try await Self.sendsAfterStopping(
                situation, client: try client(limit: situation == "gzip bomb" ? 5 << 20 : nil))
            print("send() after a \(situation): " + durations.map { String(format: "%.2f", $0) }.joined(separator: ", ") + " ms")
            tries.append(durations)
            if durations.allSatisfy({ $0 <= bound }) { break }
        }
        #expect(tries.last?.allSatisfy { $0 <= bound } == true, "send() took \(tries) ms")
    }

    /// Stops a large body as `situation` says, then times twenty sends (ms each).
    private static func sendsAfterStopping(_ situation: String, client: Client) async throws -> [Double] {
        if situation == "gzip bomb" {
            let bomb = await client.completionResult(Request<Data>("gzip-bomb", query: ["mb": 1024])).0
            #expect(bomb.failure == .responseTooLarge(limit: 5 << 20))
        } else {
            let received = Locked(0)
            let request = Request<Data>("huge", query: ["announce": 2_147_483_648]).onChunk { chunk in
                received.withLock { $0 += chunk.count }
            }
            let handle = client.send(request) { _ in }
            let deadline = Date().addingTimeInterval(20)
            while received.withLock({ $0 }) < 100 << 20, Date() < deadline { try await Task.sleep(milliseconds: 2) }
            handle.cancel()
        }
        var durations: [Double] = []
        var handles: [RequestHandle] = []
        for _ in 0..<20 {
            let started = DispatchTime.now().uptimeNanoseconds
            handles.append(client.send(Request<JSON>("json")) { _ in })
            durations.append(Double(DispatchTime.now().uptimeNanoseconds - started) / 1e6)
        }
        handles.forEach { $0.cancel() }
        return durations
    }

    /// The process's resident memory in MB (Linux: /proc; elsewhere, and under ThreadSanitizer,
    /// whose shadow memory grows with every byte touched, 0, so the checks pass).
    static func residentMegabytes() -> Double {
        guard !isUnderThreadSanitizer, let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
            let kilobytes = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kilobytes / 1024
    }

    static let isUnderThreadSanitizer: Bool = {
        let process = dlopen(nil, RTLD_NOW)
        defer { if let process { dlclose(process) } }
        return dlsym(process, "__tsan_init") != nil
    }()
}
