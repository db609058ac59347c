import Foundation
import Testing
@testable import Tern

/// Streamed responses: the parsers on their own, then the fixture's `/sse` in the three callback
/// styles — events split across chunks, a failing status, a stall, a cancel — and back-pressure.
@Suite struct StreamingTests {
    /// The events of the fixture's "basic" script.
    static let basicEvents = [
        ServerSentEvent(data: "first"),
        ServerSentEvent(event: "update", data: "second", id: "7"),
        ServerSentEvent(data: "line one\nline two", id: "7", retry: 1500),
        ServerSentEvent(data: "no space", id: "", retry: 1500),
        ServerSentEvent(data: "fourth", id: "", retry: 1500),
    ]

    static let basicScript: [String] = [
        "\u{FEFF}: a comment, ignored\n\n", "data: first\n\n", "event: update\nid: 7\nda", "ta: sec", "ond\r\n\r\n",
        "retry: 1500\ndata: line one\ndata: line two\n\n", "data:no space\rid\r\r", "unknown: x\ndata: fourth\n\n",
        "data: never dispatched",
    ]

    /// The events one parser finds in `bytes` fed `size` bytes at a time.
    static func events(in bytes: Data, chunksOf size: Int) throws -> [ServerSentEvent] {
        var parser = ServerSentEventParser()
        var events: [ServerSentEvent] = []
        var start = 0
        while start < bytes.count {
            events += try parser.feed(bytes.subdata(in: start..<min(bytes.count, start + size)))
            start += size
        }
        return events
    }

    @Test func theEventParserFollowsTheHTMLStandardWhateverTheChunking() throws {
        let bytes = Data(Self.basicScript.joined().utf8)
        for size in [1, 2, 3, 7, 64, bytes.count] {
            #expect(try Self.events(in: bytes, chunksOf: size) == Self.basicEvents, "chunks of \(size) bytes")
        }
        var parser = ServerSentEventParser()
        #expect(try parser.feed(Data("retry: 12x\ndata: a\r".utf8)).isEmpty)
        #expect(try parser.feed(Data("\n\n".utf8)) == [ServerSentEvent(data: "a")])  // CR + LF across chunks: one line end
    }

    @Test func crlfEndsOneLineAndAnInvalidRetryKeepsTheLastValidOne() async throws {
        let expected = [ServerSentEvent(data: "a\nb", retry: 1500), ServerSentEvent(data: "c", retry: 1500)]
        let bytes = Data("retry: 1500\r\ndata: a\r\ndata: b\r\n\r\nretry: 12x\r\ndata: c\r\n\r\n".utf8)
        for size in [1, 2, 5, bytes.count] {
            #expect(try Self.events(in: bytes, chunksOf: size) == expected, "chunks of \(size) bytes")
        }
        var received: [ServerSentEvent] = []
        let client = try Transfers.client()
        for try await event in client.stream(Request<Data>("sse", query: ["script": "crlf-retry"])).events { received.append(event) }
        #expect(received == expected)
    }

    @Test func linesKeepCharactersSplitAcrossChunks() throws {
        var splitter = LineSplitter()
        let text = Data("北京\r\n上海\nend".utf8)
        var lines: [String] = []
        for byte in text { lines += try splitter.feed(Data([byte])) }
        #expect(lines == ["北京", "上海"])
        #expect(splitter.finish() == "end")
    }

    @Test func anAsyncStreamDeliversEventsLinesAndBytes() async throws {
        let client = try Transfers.client()
        var events: [ServerSentEvent] = []
        for try await event in client.stream(Request<Data>("sse", query: ["script": "basic"])).events { events.append(event) }
        #expect(events == Self.basicEvents)
        var lines: [String] = []
        for try await line in client.stream(Request<Data>("sse", query: ["script": "ndjson"])).lines { lines.append(line) }
        #expect(lines == [#"{"n": 1, "city": "北京"}"#, #"{"n": 2}"#, #"{"n": 3}"#])
        var bytes = Data()
        for try await chunk in client.stream(Request<Data>("pattern", query: ["n": 100_000])) { bytes.append(chunk) }
        #expect(bytes == TestPattern.bytes(100_000))
    }

    @Test func closuresReceiveEventsThenTheCompletionOnTheirQueue() async throws {
        let queue = DispatchQueue(label: "events")
        let events = Locked([ServerSentEvent]())
        // Made before the continuation: a client that cannot be made must fail the test, not leave it waiting.
        let client = try Transfers.client()
        let result: Result<Response<Data>, TernError> = await withCheckedContinuation { continuation in
            client.events(
                Request<Data>("sse", query: ["script": "basic"]), queue: .queue(queue),
                onEvent: { event in
                    dispatchPrecondition(condition: .onQueue(queue))
                    events.withLock { $0.append(event) }
                }, completion: { continuation.resume(returning: $0) })
        }
        #expect(events.withLock { $0 } == Self.basicEvents)
        let response = try result.get()
        #expect(response.statusCode == 200 && response.data.isEmpty)  // the body went to the closure
        #expect(response.header("Content-Type") == "text/event-stream")
    }

    @Test func aDelegateReceivesChunksEventsAndTheResult() async throws {
        let delegate = StreamRecorder()
        let client = try Transfers.client()
        let handle = client.stream(Request<Data>("sse", query: ["script": "basic"]), delegate: delegate)
        try await delegate.waitForResult()
        #expect(delegate.events == Self.basicEvents)
        #expect(String(decoding: delegate.chunks.reduce(Data(), +), as: UTF8.self) == Self.basicScript.joined())
        #expect(delegate.handles.allSatisfy { $0 === handle })
        #expect(delegate.results == ["success"])
    }

    @Test func aFailingStatusFailsBeforeAnyChunkInEveryStyle() async throws {
        let client = try Transfers.client()
        let failing = Request<Data>("sse", query: ["script": "basic", "status": 503])
        do {
            for try await _ in client.stream(failing) { Issue.record("a chunk of a 503") }
            Issue.record("no error")
        } catch {
            #expect(
                error as? TernError
                    == .unacceptableStatus(
                        code: 503, body: Data(Self.basicScript.joined().utf8),
                        headers: (error as? TernError)?.responseHeaders ?? [:]))
        }
        let chunks = Counter()
        let result: Result<Response<Data>, TernError> = await withCheckedContinuation { continuation in
            client.stream(failing, onChunk: { _ in chunks.increment() }, completion: { continuation.resume(returning: $0) })
        }
        #expect(chunks.count == 0 && result.failure?.statusCode == 503)
        let delegate = StreamRecorder()
        client.stream(failing, delegate: delegate)
        try await delegate.waitForResult()
        #expect(delegate.chunks.isEmpty && delegate.results == ["failure 503"])
    }

    @Test func aStallIsEndedByTheDeadlineCountedFromTheLastChunk() async throws {
        let client = try Transfers.client()
        var request = Request<Data>("sse", query: ["script": "stall"])
        // 5 s: room for a loaded fixture server to send the first event before the deadline.
        request.timeout = 5
        let started = Date()
        var events: [ServerSentEvent] = []
        do {
            for try await event in client.stream(request).events { events.append(event) }
            Issue.record("the stall did not end in an error")
        } catch {
            #expect(error as? TernError == .timedOut(after: 5))
        }
        let seconds = Date().timeIntervalSince(started)
        #expect(events == [ServerSentEvent(data: "one")], "ended after \(seconds) s")
        // The server stays silent for 30 s after the first event: the deadline (5 s after it)
        // must have ended the stream long before the server would have.
        #expect(seconds >= 4.9 && seconds < 25, "\(seconds) s")
    }

    @Test func aLongStreamOutlivesItsDeadlineWhileChunksKeepComing() async throws {
        var request = Request<Data>("drip", query: ["chunks": 20, "interval": 0.25])
        // The whole stream takes 5 s; no gap comes near 4 s, even when a loaded machine holds
        // URLSession's delegate queue up for 3 s.
        request.timeout = 4
        var body = Data()
        for try await chunk in try Transfers.client().stream(request) { body.append(chunk) }
        #expect(body == Data((0..<20).map { String(format: "chunk%03d", $0) }.joined().utf8))
    }

    @Test func cancellingMidStreamStopsChunksInEveryStyle() async throws {
        let client = try Transfers.client()
        let endless = Request<Data>("sse", query: ["script": "endless"])
        // Async: leaving the loop cancels the request.
        var seen = 0
        for try await _ in client.stream(endless).events {
            seen += 1
            if seen == 3 { break }
        }
        #expect(seen == 3)
        // Closure: nothing after cancel() returns on the callback queue, then one cancelled
        // completion. (Cancelled from another thread, an event already being delivered may still
        // finish: with `.immediate` a cancel cannot wait for a handler running elsewhere.)
        let afterCancel = Counter()
        let cancelled = Locked(false)
        let completions = Counter()
        let callbacks = DispatchQueue(label: "StreamingTests.callbacks")
        let handle = client.events(
            endless, queue: .queue(callbacks),
            onEvent: { _ in
                if cancelled.withLock({ $0 }) { afterCancel.increment() }
            },
            completion: { result in
                #expect(result.failure == .cancelled(.explicit))
                completions.increment()
            })
        try await Task.sleep(milliseconds: 200)
        callbacks.sync {
            handle.cancel()
            cancelled.withLock { $0 = true }
        }
        try await Task.sleep(milliseconds: 300)
        #expect(afterCancel.count == 0 && completions.count == 1)
        // Task cancellation ends an async iteration.
        let chunks = Counter()
        let task = Task {
            var count = 0
            do {
                for try await _ in client.stream(endless) {
                    count += 1
                    chunks.increment()
                }
            } catch { return (count, error as? TernError) }
            return (count, nil)
        }
        let deadline = Date().addingTimeInterval(20)
        while chunks.count == 0, Date() < deadline { try await Task.sleep(milliseconds: 10) }
        task.cancel()
        let (count, error) = await task.value
        #expect(count > 0 && error == .cancelled(.explicit))
    }

    @Test func aSlowReaderIsPausedOrBoundedAndNeverGetsABodyTwice() async throws {
        let size = 20 * 1024 * 1024
        let key = Fixture.uniqueKey("slow")
        try await Transfers.setState(key, ["pace": 10_000_000])
        let client = try Transfers.client()
        var stream = client.stream(Request<Data>("download", query: ["key": key, "size": size]))
        stream.bufferLimit = 256 * 1024
        var iterator = stream.makeAsyncIterator()
        var received = try await iterator.next() ?? Data()
        try await Task.sleep(milliseconds: 1000)
        let buffered = iterator.buffer.bufferedBytes
        if client.transport.pausesExchanges {
            #expect(buffered < 4 * 1024 * 1024, "\(buffered) bytes buffered ahead of a stalled reader")
        }
        while let chunk = try await iterator.next() {
            received.append(chunk)
            if received.count < 4 * 1024 * 1024 { try await Task.sleep(milliseconds: 5) }
        }
        #expect(received == TestPattern.bytes(size))
        #expect(try await Transfers.stats(key).starts == [0])  // sent once, never again
    }

    @Test func aReaderTooFarBehindFailsAtTheSizeLimitWhereTheTransportCannotPause() async throws {
        let client = try Transfers.client()
        guard !client.transport.pausesExchanges else { return }
        // An unannounced, endless body: nothing refuses it at the head.
        var request = Request<Data>("huge", query: ["chunked": 1])
        request.maximumResponseSize = 1024 * 1024
        var iterator = client.stream(request).makeAsyncIterator()
        var received = try await iterator.next()?.count ?? 0
        // The reader stalls while the body arrives, until most of the limit waits for it.
        let deadline = Date().addingTimeInterval(20)
        while iterator.buffer.bufferedBytes < 768 * 1024, Date() < deadline { try await Task.sleep(milliseconds: 10) }
        do {
            while let chunk = try await iterator.next() { received += chunk.count }
            Issue.record("no error")
        } catch {
            #expect(error as? TernError == .responseTooLarge(limit: 1024 * 1024))
        }
        // Every byte under the limit reached the reader, none past it.
        #expect(received > 768 * 1024 && received <= 1024 * 1024)
    }
}

/// Records what a `TransferDelegate` receives.
final class StreamRecorder: TransferDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var _chunks: [Data] = [], _events: [ServerSentEvent] = [], _results: [String] = [], _handles: [RequestHandle] = []
    private var _progress: [TransferProgress] = []
    var chunks: [Data] { lock.withLock { _chunks } }
    var events: [ServerSentEvent] { lock.withLock { _events } }
    var results: [String] { lock.withLock { _results } }
    var handles: [RequestHandle] { lock.withLock { _handles } }
    var progress: [TransferProgress] { lock.withLock { _progress } }

    func request(_ request: RequestHandle, didReceive chunk: Data) {
        lock.withLock {
            _chunks.append(chunk); _handles.append(request)
        }
    }
    func request(_ request: RequestHandle, didReceive event: ServerSentEvent) { lock.withLock { _events.append(event) } }
    func request(_ request: RequestHandle, didUpdate progress: TransferProgress) { lock.withLock { _progress.append(progress) } }
    func request(_ request: RequestHandle, didSucceedWith response: Response<any Sendable>) { lock.withLock { _results.append("success") } }
    func request(_ request: RequestHandle, didFailWith error: TernError) {
        lock.withLock { _results.append("failure \(error.statusCode.map(String.init) ?? "\(error)")") }
    }
    func request(_ request: RequestHandle, didHitCacheWith response: Response<any Sendable>) {}

    func waitForResult(seconds: Double = 20) async throws {
        let deadline = Date().addingTimeInterval(seconds)
        while results.isEmpty {
            try #require(Date() < deadline, "no result")
            try await Task.sleep(milliseconds: 5)
        }
    }
}
