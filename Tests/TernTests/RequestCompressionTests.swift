import Foundation
import Testing
@testable import Tern

/// Compressed request bodies, decoded by the fixture's `/inflate` (Python's gzip and zlib): per
/// request and per API group, on both transports, with the bytes on the wire compressed.
@Suite struct RequestCompressionTests {
    private static let text = String(repeating: "{\"city\":\"成都\",\"temperature\":21}\n", count: 1_500)

    @Test(arguments: TransportKind.all, RequestCompression.allCases)
    func aCompressedBodyArrivesWhole(kind: TransportKind, compression: RequestCompression) async throws {
        let client = kind.client(try TestServers.fixture())
        var request = Request<JSON>("inflate", method: .post, body: .data(Data(Self.text.utf8), contentType: "application/x-ndjson"))
        request.compression = compression
        let sent = Locked(0)
        request.progress = { progress in
            if progress.direction == .upload { sent.withLock { $0 = max($0, Int(progress.completedBytes)) } }
        }
        let answer = try await client.send(request).value
        #expect(answer["encoding"]?.string == compression.rawValue)
        #expect(answer["body"]?.string == Self.text)
        #expect(answer["content_type"]?.string == "application/x-ndjson")
        let received = try #require(answer["received"]?.int)
        #expect(received < Data(Self.text.utf8).count / 10, "\(received) bytes on the wire")
        // Upload progress, where the transport reports it, counts the compressed bytes.
        let counted = sent.withLock { $0 }
        #expect(counted == received || counted == 0, "progress counted \(counted)")
    }

    @Test(arguments: TransportKind.all)
    func aGroupCompressesItsRequestsUnlessOneIsEncodedAlready(kind: TransportKind) async throws {
        let group = APIGroup("logs", baseURL: try TestServers.fixture()) { $0.requestCompression = .gzip }
        let client = kind.client(try TestServers.fixture())
        var json = Request<JSON>("inflate", method: .post, body: .json(["lines": Array(repeating: "a line", count: 500)]))
        json.group = group
        let answer = try await client.send(json).value
        #expect(answer["encoding"]?.string == "gzip")
        #expect(answer["body"]?.string?.hasPrefix("{\"lines\":[\"a line\"") == true)
        // Encoded by the app already: sent as it is, not compressed twice.
        let encoded = try RequestCompression.deflate.compress(Data("already".utf8))
        var own = Request<JSON>("inflate", method: .post, body: .data(encoded), headers: ["Content-Encoding": "deflate"])
        own.group = group
        #expect(try await client.send(own).value["body"]?.string == "already")
    }

    @Test func aFileBodyIsRefusedWithATypedError() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("compress-\(UUID().uuidString).txt")
        try Data("from a file".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let client = TransportKind.urlSession.client(try TestServers.fixture())
        var request = Request<JSON>("inflate", method: .post, body: .file(file))
        request.compression = .gzip
        let result = await client.completionResult(request).0
        guard case .invalidRequest(.invalidValue(let name, _))? = result.failure else {
            Issue.record("expected an invalid request, got \(result)")
            return
        }
        #expect(name == "compression")
    }

    @Test func compressionRoundTripsEveryShapeOfBody() throws {
        for size in [0, 1, 100, 70_000, 1 << 20] {
            let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 / 7) })
            for compression in RequestCompression.allCases {
                let compressed = try compression.compress(data)
                #expect(!compressed.isEmpty)
                #expect(compression == .gzip ? compressed.prefix(2) == Data([0x1f, 0x8b]) : compressed.first == 0x78)
            }
        }
    }
}
