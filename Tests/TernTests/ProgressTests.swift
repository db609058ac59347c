import Foundation
import Testing
@testable import Tern
import TernStubs

/// Records progress calls and the completion, in the order they ran.
final class ProgressLog: Sendable {
    enum Entry: Sendable { case progress(TransferProgress), completed }
    private let entries = Locked([Entry]())

    func record(_ entry: Entry) { entries.withLock { $0.append(entry) } }
    var all: [Entry] { entries.withLock { $0 } }
    func progress(_ direction: TransferProgress.Direction) -> [TransferProgress] {
        all.compactMap { if case .progress(let p) = $0, p.direction == direction { p } else { nil } }
    }
    /// Whether every progress call came before the completion.
    var progressPrecedesCompletion: Bool {
        guard let end = all.firstIndex(where: { if case .completed = $0 { true } else { false } }) else { return false }
        return end == all.count - 1
    }
}

/// `Request.progress` over real traffic: downloads with and without a known length, uploads,
/// cancellation, shared calls, and chunked stubs.
@Suite struct ProgressTests {
    /// Sends `request` with a progress log on `queue` and waits for its completion.
    func run<Value>(
        _ client: Client, _ request: Request<Value>, queue: CallbackQueue = .queue(DispatchQueue(label: "progress")),
        log: ProgressLog = ProgressLog()
    )
        async -> (Result<Response<Value>, TernError>, ProgressLog)
    {
        var request = request.onProgress { log.record(.progress($0)) }
        request.callbackQueue = queue
        let result = await withCheckedContinuation { continuation in
            client.send(request) { result in
                log.record(.completed)
                continuation.resume(returning: result)
            }
        }
        return (result, log)
    }

    @Test func downloadProgressRisesToTheContentLength() async throws {
        let client = Client(baseURL: try TestServers.fixture())
        let size = 400_000
        // Chunks 80 ms apart, over twice the coalescing interval; a starved machine can still
        // read several at once, so only "more than the final step" is certain.
        let (result, log) = await run(client, Request<Data>("slow-pattern", query: ["n": size, "chunk": 40_000, "interval": 0.08]))
        #expect(try result.get().data == TestPattern.bytes(size))
        let steps = log.progress(.download)
        #expect(steps.count >= 2, "a slow body comes in several steps: \(steps.count)")
        #expect(steps.allSatisfy { $0.expectedBytes == Int64(size) })
        #expect(zip(steps, steps.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
        #expect(steps.last?.completedBytes == Int64(size) && steps.last?.fractionCompleted == 1)
        #expect(log.progressPrecedesCompletion)
        #expect(log.progress(.upload).isEmpty)
    }

    @Test func progressOnTheMainQueueEndsBeforeTheCompletion() async throws {
        let client = Client(baseURL: try TestServers.fixture())
        let (result, log) = await run(client, Request<Data>("slow-pattern", query: ["n": 100_000, "chunk": 25_000]), queue: .main)
        #expect(try result.get().data.count == 100_000)
        #expect(log.progress(.download).last?.completedBytes == 100_000)
        #expect(log.progressPrecedesCompletion)
    }

    @Test func chunkedBodiesHaveNoTotal() async throws {
        // Delivered `.immediate`, each chunk (400 ms apart) is usually its own step, but a
        // transport starved for seconds in the loaded parallel pass hands several over as one
        // (once all four, in a 7 s run): what matters is that no step claims a total.
        let client = Client(baseURL: try TestServers.fixture())
        let (result, log) = await run(client, Request<String>("drip", query: ["chunks": 4, "interval": 0.4]), queue: .immediate)
        #expect(try result.get().value == "chunk000chunk001chunk002chunk003")
        let steps = log.progress(.download)
        #expect(!steps.isEmpty && steps.allSatisfy { $0.expectedBytes == nil && $0.fractionCompleted == nil })
        #expect(steps.last?.completedBytes == 32)
    }

    /// One delivery carrying both directions reports the upload first, as the exchange went,
    /// whatever order the counts came in.
    @Test func oneDeliveryReportsTheUploadBeforeTheDownload() async {
        let queue = DispatchQueue(label: "suspended")
        queue.suspend()
        let log = ProgressLog()
        let reporter = ProgressReporter(queue: .queue(queue)) { _, progress in log.record(.progress(progress)) }
        reporter.responseStarted(ResponseHead(url: nil, statusCode: 200, headerFields: ["Content-Length": "10"]))
        reporter.received(10)
        reporter.sent(100, expected: 100)
        queue.resume()
        queue.sync {}
        #expect(log.progress(.upload).count == 1 && log.progress(.download).count == 1)
        let directions = log.all.compactMap { entry -> TransferProgress.Direction? in
            if case .progress(let progress) = entry { progress.direction } else { nil }
        }
        #expect(directions == [.upload, .download])
    }

    @Test func uploadProgressCountsTheBody() async throws {
        let client = Client(baseURL: try TestServers.httpbin())
        let body = TestPattern.bytes(2_000_000)
        let (result, log) = await run(
            client, Request<JSON>("anything", method: .post, body: .data(body, contentType: "application/octet-stream")))
        #expect(try result.get().statusCode == 200)
        let steps = log.progress(.upload)
        #expect(!steps.isEmpty)
        #expect(steps.last?.completedBytes == Int64(body.count))
        #expect(steps.last?.expectedBytes == Int64(body.count))
        #expect(log.progressPrecedesCompletion)
    }

    /// One bar per direction: the upload handler sees the body going up and nothing else, the
    /// download handler the response coming down, each only ever rising.
    @Test func eachDirectionHasItsOwnHandler() async throws {
        let client = Client(baseURL: try TestServers.httpbin()) { $0.callbackQueue = .queue(DispatchQueue(label: "directions")) }
        let body = TestPattern.bytes(1_000_000)
        let up = ProgressLog()
        let down = ProgressLog()
        let request = Request<Data>("anything", method: .post, body: .data(body, contentType: "application/octet-stream"))
            .onUploadProgress { up.record(.progress($0)) }
            .onDownloadProgress { down.record(.progress($0)) }
        let response = try await client.send(request)
        let uploads = up.progress(.upload)
        let downloads = down.progress(.download)
        #expect(up.progress(.download).isEmpty && down.progress(.upload).isEmpty)
        #expect(uploads.last?.completedBytes == Int64(body.count) && uploads.last?.expectedBytes == Int64(body.count))
        #expect(downloads.last?.completedBytes == Int64(response.data.count))
        for steps in [uploads, downloads] {
            #expect(zip(steps, steps.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
            #expect(steps.allSatisfy { $0.completedBytes > 0 || ($0.expectedBytes ?? 0) > 0 })  // never 0 of 0
        }
    }

    /// The body goes up before the answer comes down, and progress says so in that order: every
    /// upload step, the last (the whole body) included, before the first download step.
    @Test(arguments: TransportKind.all)
    func uploadProgressEndsBeforeDownloadProgressBegins(over transport: TransportKind) async throws {
        let client = transport.client(try TestServers.httpbin())
        let body = TestPattern.bytes(1_000_000)
        let (result, log) = await run(
            client, Request<Data>("anything", method: .post, body: .data(body, contentType: "application/octet-stream")))
        #expect(try result.get().statusCode == 200)
        let directions = log.all.compactMap { if case .progress(let step) = $0 { step.direction } else { nil } }
        let firstDownload = try #require(directions.firstIndex(of: .download))
        let lastUpload = try #require(directions.lastIndex(of: .upload))
        #expect(lastUpload < firstDownload, "\(directions)")
        #expect(log.progress(.upload).last?.completedBytes == Int64(body.count))
        #expect(log.progressPrecedesCompletion)
    }

    /// A redirect's own body is not the caller's download: the count rises once, to the final
    /// response's length.
    @Test(arguments: TransportKind.all)
    func redirectBodiesAreNotCounted(over transport: TransportKind) async throws {
        let client = transport.client(try TestServers.fixture())
        let (result, log) = await run(client, Request<Data>("redirect-chain", query: ["n": 3, "key": Fixture.uniqueKey("progress")]))
        let final = try result.get()
        #expect(final.redirects.count == 3)
        let steps = log.progress(.download)
        #expect(!steps.isEmpty)
        #expect(zip(steps, steps.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes }, "\(steps)")
        #expect(steps.allSatisfy { $0.expectedBytes == Int64(final.data.count) }, "\(steps)")
        #expect(steps.last?.completedBytes == Int64(final.data.count))
    }

    @Test func nothingArrivesAfterCancel() async throws {
        let client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
        let log = ProgressLog()
        let firstChunk = Counter()
        let request = Request<Data>("slow-pattern", query: ["n": 1_000_000, "chunk": 10_000, "interval": 0.02])
            .onProgress {
                log.record(.progress($0)); firstChunk.increment()
            }
        let handle = client.send(request) { _ in log.record(.completed) }
        let deadline = Date().addingTimeInterval(10)
        while firstChunk.count == 0, Date() < deadline { try await Task.sleep(milliseconds: 10) }
        handle.cancel()
        try await Task.sleep(milliseconds: 300)
        // With `.immediate` the cancellation callback ran inside cancel(): nothing may follow it.
        let completions = log.all.filter { if case .completed = $0 { true } else { false } }
        #expect(completions.count == 1)
        if case .completed = log.all.last {} else { Issue.record("progress arrived after cancel(): \(log.all)") }
    }

    @Test func sharedCallsReportProgressToEveryMember() async throws {
        let client = Client(baseURL: try TestServers.fixture()) { $0.repeatStrategy = .share }
        let request = Request<Data>("slow-pattern", query: ["n": 200_000, "chunk": 20_000, "interval": 0.02])
        async let first = run(client, request)
        async let second = run(client, request)
        let (a, b) = await (first, second)
        for (result, log) in [a, b] {
            #expect(try result.get().data.count == 200_000)
            #expect(log.progress(.download).last?.completedBytes == 200_000)
            #expect(log.progressPrecedesCompletion)
        }
    }

    /// A member that joins a shared exchange halfway through its body catches up: the whole body,
    /// progress that only rises, up to the full count. The body is kept once for all members.
    @Test func aLateMemberOfASharedExchangeCatchesUp() async throws {
        let client = Client(baseURL: try TestServers.fixture()) { $0.repeatStrategy = .share }
        // The server holds the body after its first chunk until the second caller has joined.
        let hold = Fixture.uniqueKey("late-member")
        let request = Request<Data>("slow-pattern", query: ["n": 200_000, "chunk": 20_000, "interval": 0.02, "hold": hold])
        let firstLog = ProgressLog()
        async let first = run(client, request, log: firstLog)
        #expect(await eventually(within: 30) { !firstLog.progress(.download).isEmpty })
        async let late = run(client, request)
        #expect(await eventually(within: 30) { client.runningRequests.count == 2 })
        try await Fixture.release(hold)
        let (a, b) = await (first, late)
        for (result, log) in [a, b] {
            #expect(try result.get().data.count == 200_000)
            let counts = log.progress(.download).map(\.completedBytes)
            #expect(counts == counts.sorted() && counts.last == 200_000, "\(counts)")
            #expect(log.progressPrecedesCompletion)
        }
        #expect(a.1.progress(.download).count >= 2, "the first member saw the body come in")
        let (dataA, dataB) = (try a.0.get().data, try b.0.get().data)
        #expect(dataA.withUnsafeBytes { $0.baseAddress } == dataB.withUnsafeBytes { $0.baseAddress }, "each member has its own copy")
    }

    /// A slow body of tiny chunks on an idle queue: about 30 updates a second, not one per chunk,
    /// and still the final count before the completion.
    @Test(arguments: TransportKind.all)
    func progressIsCoalescedToAboutThirtyUpdatesASecond(over transport: TransportKind) async throws {
        let client = try Client(baseURL: TestServers.fixture()) { transport.configure(&$0) }
        let size = 100_000
        let started = Date()
        let (result, log) = await run(client, Request<Data>("slow-pattern", query: ["n": size, "chunk": 500, "interval": 0.002]))
        let seconds = Date().timeIntervalSince(started)
        #expect(try result.get().data.count == size)
        let steps = log.progress(.download)
        #expect(steps.count >= 2 && Double(steps.count) <= seconds * 30 + 3, "\(steps.count) updates in \(seconds) s for 200 chunks")
        #expect(steps.last?.completedBytes == Int64(size) && log.progressPrecedesCompletion)
    }

    /// An empty body reports no progress: no "0 of 0" event.
    @Test func anEmptyBodyReportsNothing() async throws {
        let client = Client(baseURL: try TestServers.fixture())
        let (result, log) = await run(client, Request<Data>("empty-json"))
        #expect(try result.get().data.isEmpty)
        #expect(log.progress(.download).isEmpty, "\(log.progress(.download))")
    }

    @Test func stubbedChunksReportProgress() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/file"), StubResponse.data(TestPattern.bytes(10_000)).chunked(into: 5, every: 0.01))
        let client = Client(baseURL: "https://example.test") { $0.transport = stubs }
        let (result, log) = await run(client, Request<Data>("file"))
        #expect(try result.get().data.count == 10_000)
        let steps = log.progress(.download)
        #expect(steps.count >= 2)
        #expect(steps.last?.completedBytes == 10_000)
    }
}
