import Foundation
import Testing
@testable import Tern

/// Request bodies produced while they are sent (`RequestBody.stream`), on both transports: what
/// the fixture's `/upload-sizes` received (framing, length, SHA-256), the producer held back by
/// the transport, and the typed failures — a producer that throws, a wrong length, a body
/// needed again that can be produced only once.
@Suite struct StreamedBodyTests {
    /// `count` pattern bytes in pieces of 1 to 70,000 bytes, as an async sequence.
    static func pieces(_ count: Int) -> AsyncStream<Data> {
        let bytes = TestPattern.bytes(count)
        return AsyncStream { continuation in
            var offset = 0
            var size = 1
            while offset < count {
                let end = min(count, offset + size)
                continuation.yield(bytes.subdata(in: offset..<end))
                offset = end
                size = size * 7 % 70_001 + 1
            }
            continuation.finish()
        }
    }

    private static func client(_ kind: TransportKind, _ configure: (inout ClientConfiguration) -> Void = { _ in }) throws -> Client {
        kind.client(try TestServers.fixture()) {
            $0.timeout = 30
            configure(&$0)
        }
    }

    /// Whether this transport sends a streamed body with its `Content-Length` (URLSession on
    /// Linux sends every stream chunked).
    private static func keepsLength(_ kind: TransportKind) -> Bool {
        kind == .curl || Platform.sendsContentLengthOfStreams
    }

    @Test(arguments: TransportKind.all)
    func aBodyOfUnknownLengthArrivesChunkedByteForByte(kind: TransportKind) async throws {
        let count = 3_000_000
        let log = ProgressLog()
        let request = Request<JSON>("upload-sizes", method: .post, body: .stream(Self.pieces(count), contentType: "text/csv"))
            .onProgress { log.record(.progress($0)) }
        let json = try await Self.client(kind).send(request).json
        #expect(json["chunked"]?.bool == true)
        #expect(json["contentLength"]?.int == nil)
        #expect(json["size"]?.int == count)
        #expect(json["sha256"]?.string == UploadTests.sha256(TestPattern.bytes(count)))
        #expect(json["contentType"]?.string == "text/csv")
        #expect(log.progress(.upload).last?.completedBytes == Int64(count))
    }

    @Test(arguments: TransportKind.all)
    func aBodyOfKnownLengthIsSentWithItsContentLength(kind: TransportKind) async throws {
        let count = 1_500_000
        let request = Request<JSON>("upload-sizes", method: .put, body: .stream(Self.pieces(count), length: Int64(count)))
        let json = try await Self.client(kind).send(request).json
        #expect(json["size"]?.int == count)
        #expect(json["sha256"]?.string == UploadTests.sha256(TestPattern.bytes(count)))
        #expect(json["contentType"]?.string == "application/octet-stream")
        if Self.keepsLength(kind) {
            #expect(json["contentLength"]?.int == count && json["chunked"]?.bool == false)
        } else {
            #expect(json["chunked"]?.bool == true)
        }
    }

    @Test(arguments: TransportKind.all)
    func theProducerIsAskedForMoreOnlyAsTheServerReads(kind: TransportKind) async throws {
        // The server waits 4 s before it reads a byte: a second in, the producer can have written no
        // more than Tern's buffer and the sockets' (a few MB on loopback), far from 64 MB.
        let produced = Total()
        let piece = Data(repeating: 0x41, count: 64 * 1024)
        let total = 1024 * piece.count
        let body = RequestBody.stream(length: Int64(total)) { writer in
            for _ in 0..<1024 {
                try await writer.write(piece)
                produced.add(piece.count)
            }
        }
        let client = try Self.client(kind)
        async let answer = client.send(Request<JSON>("upload-sizes", method: .post, query: ["pause": 4], body: body))
        try await Task.sleep(milliseconds: 1_000)
        let early = produced.value
        let json = try await answer.json
        #expect(early < total / 4, "produced \(early) bytes before the server read any")
        #expect(json["size"]?.int == total)
        #expect(produced.value == total)
    }

    @Test(arguments: TransportKind.all)
    func aProducerThatThrowsEndsTheRequestWithItsError(kind: TransportKind) async throws {
        struct ExportFailed: Error {}
        let body = RequestBody.stream { writer in
            try await writer.write(Data(repeating: 1, count: 100_000))
            throw ExportFailed()
        }
        let result = await (try Self.client(kind)).completionResult(Request<JSON>("upload-sizes", method: .post, body: body))
        guard case .requestBodyFailed(.producerFailed(let error))? = result.0.failure else {
            Issue.record("expected a producer failure, got \(result.0)")
            return
        }
        #expect(error is ExportFailed)
    }

    @Test(arguments: TransportKind.all)
    func aBodyShorterOrLongerThanItsLengthIsRefused(kind: TransportKind) async throws {
        let client = try Self.client(kind)
        let short = await client.completionResult(
            Request<JSON>("upload-sizes", method: .post, body: .stream(Self.pieces(1000), length: 2000)))
        guard case .requestBodyFailed(.lengthMismatch(2000, 1000))? = short.0.failure else {
            Issue.record("expected a length mismatch, got \(short.0)")
            return
        }
        let long = await client.completionResult(
            Request<JSON>("upload-sizes", method: .post, body: .stream(Self.pieces(300_000), length: 1000)))
        guard case .requestBodyFailed(.lengthMismatch(1000, let produced))? = long.0.failure else {
            Issue.record("expected a length mismatch, got \(long.0)")
            return
        }
        #expect(produced > 1000)
    }

    @Test(arguments: TransportKind.all)
    func aRedirectThatKeepsTheMethodNeedsABodyFactory(kind: TransportKind) async throws {
        let client = try Self.client(kind)
        let query: Parameters = ["status": 307, "to": "/upload-sizes"]
        let once = await client.completionResult(
            Request<JSON>("redirect", method: .post, query: query, body: .stream(Self.pieces(200_000))))
        guard case .requestBodyFailed(.notReplayable(let redirect?))? = once.0.failure else {
            Issue.record("expected a body that cannot be produced again, got \(once.0)")
            return
        }
        #expect(redirect.statusCode == 307 && redirect.to.path == "/upload-sizes")
        let factory = RequestBody.stream(length: 200_000) { Self.pieces(200_000) }
        let json = try await client.send(Request<JSON>("redirect", method: .post, query: query, body: factory)).json
        #expect(json["size"]?.int == 200_000)
        #expect(json["sha256"]?.string == UploadTests.sha256(TestPattern.bytes(200_000)))
    }

    @Test(arguments: TransportKind.all)
    func aOneShotBodyIsNotRetriedAndAFactoryIs(kind: TransportKind) async throws {
        let client = try Self.client(kind) { $0.retryPolicy = .exponential(maxAttempts: 3, baseDelay: 0.01) }
        let once = "stream-once-\(kind)-\(UUID().uuidString)"
        let first = await client.completionResult(
            Request<JSON>("flaky", method: .put, query: ["key": once, "fail": 1], body: .stream(Self.pieces(10_000))))
        #expect(first.0.failure?.statusCode == 503, "the attempt's own failure, not resent")
        #expect(first.0.failure?.attempts == nil, "one attempt: no failedAfterRetries")
        let again = "stream-factory-\(kind)-\(UUID().uuidString)"
        let made = Counter()
        let factory = RequestBody.stream {
            made.increment()
            return Self.pieces(10_000)
        }
        let json = try await client.send(Request<JSON>("flaky", method: .put, query: ["key": again, "fail": 1], body: factory)).json
        #expect(json["n"]?.int == 2)
        #expect(made.count == 2, "one sequence per attempt")
    }

    @Test(arguments: TransportKind.all)
    func cancellingStopsTheProducer(kind: TransportKind) async throws {
        let stopped = Counter()
        let body = RequestBody.stream { writer in
            do {
                while true { try await writer.write(Data(repeating: 2, count: 64 * 1024)) }
            } catch {
                stopped.increment()
                throw error
            }
        }
        let client = try Self.client(kind)
        let handle = client.send(Request<JSON>("upload-sizes", method: .post, query: ["pause": 3], body: body)) { _ in }
        try await Task.sleep(milliseconds: 300)
        handle.cancel()
        let deadline = Date().addingTimeInterval(10)
        while stopped.count == 0, Date() < deadline { try await Task.sleep(milliseconds: 20) }
        #expect(stopped.count == 1, "the producer's write threw once the request was cancelled")
    }

    @Test func theBufferHoldsTheWriterBackUntilTheReaderTakesBytes() async throws {
        let stream = RequestBodyStream(length: nil, bufferSize: 1000)
        let returned = Counter()
        let writer = Task {
            try await stream.write(Data(repeating: 3, count: 1500))
            returned.increment()
        }
        try await Task.sleep(milliseconds: 100)
        #expect(returned.count == 0, "1,500 bytes over a 1,000-byte buffer: the writer waits")
        var buffer = [UInt8](repeating: 0, count: 800)
        let first = buffer.withUnsafeMutableBytes { stream.read(into: $0, whenReadable: {}) }
        #expect(first == .bytes(800))
        try await Task.sleep(milliseconds: 100)
        #expect(returned.count == 0, "700 bytes still wait, more than half the buffer: the writer still waits")
        let rest = buffer.withUnsafeMutableBytes { stream.read(into: $0, whenReadable: {}) }
        #expect(rest == .bytes(700))
        try await writer.value
        #expect(returned.count == 1, "half the buffer free again: the writer goes on")
        stream.finish()
        #expect(buffer.withUnsafeMutableBytes { stream.read(into: $0, whenReadable: {}) } == .end)
    }

    @Test func aProducedBodyIsNeitherCompressedNorKeptInTheOutbox() async throws {
        let client = try Self.client(.urlSession)
        var compressed = Request<JSON>("upload-sizes", method: .post, body: .stream(Self.pieces(10)))
        compressed.compression = .gzip
        let result = await client.completionResult(compressed)
        guard case .invalidRequest(.invalidValue(name: "compression", _))? = result.0.failure else {
            Issue.record("expected compression to be refused, got \(result.0)")
            return
        }
        let directory = try Transfers.scratch("stream-outbox")
        defer { Transfers.clean(directory) }
        let outbox = try Outbox(client: client, configuration: OutboxFixture.configuration(directory))
        defer { outbox.close() }
        #expect(throws: OutboxError.self) {
            try outbox.enqueue(Request<JSON>("upload-sizes", method: .post, body: .stream(Self.pieces(10))))
        }
        #expect(outbox.items.isEmpty)
    }
}

/// Bytes several tasks add up.
private final class Total: Sendable {
    private let total = Locked(0)
    func add(_ amount: Int) { total.withLock { $0 += amount } }
    var value: Int { total.withLock { $0 } }
}
