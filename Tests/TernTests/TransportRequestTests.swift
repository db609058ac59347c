import Foundation
import Testing
import TernStubs
@testable import Tern

/// The transport seam's request: a body from a file, a response into a file from an offset, a
/// memory limit, and redirects handed back unfollowed — on URLSession (buffered and streamed)
/// and on the stubs alike.
@Suite struct TransportRequestTests {
    /// Runs one exchange on `transport` and collects its outcome.
    private func exchange(_ transport: any Transport, _ request: TransportRequest) async -> (HTTPURLResponse?, Data, URLError?) {
        let collected = Locked((response: HTTPURLResponse?.none, body: Data()))
        let error: URLError? = await withCheckedContinuation { continuation in
            _ = transport.start(request) { event in
                switch event {
                case .head(let head): collected.withLock { $0 = (head.httpResponse, Data()) }
                case .data(let chunk): collected.withLock { $0.body.append(chunk) }
                case .completed(let error): continuation.resume(returning: error)
                default: break
                }
            }
        }
        let (response, body) = collected.withLock { $0 }
        return (response, body, error)
    }

    private func sessionTransport() -> URLSessionTransport {
        URLSessionTransport(configuration: ClientConfiguration().makeSessionConfiguration())
    }

    private func url(_ path: String) throws -> URLRequest {
        URLRequest(url: URL(string: try TestServers.fixture() + path)!)
    }

    @Test(arguments: [false, true])
    func aMemoryLimitEndsAnOversizedBody(streamed: Bool) async throws {
        let transport = sessionTransport()
        let limited = TransportRequest(try url("/pattern?n=5000"), destination: .memory(limit: 4096), streamsBody: streamed)
        #expect(await exchange(transport, limited).2?.code == .dataLengthExceedsMaximum)
        let fits = TransportRequest(try url("/pattern?n=4096"), destination: .memory(limit: 4096), streamsBody: streamed)
        let (response, body, error) = await exchange(transport, fits)
        #expect(error == nil && response?.statusCode == 200 && body == TestPattern.bytes(4096))
    }

    @Test func aFileDestinationWritesFromItsOffset() async throws {
        let transport = sessionTransport()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tern-download-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        let whole = await exchange(transport, TransportRequest(try url("/pattern?n=20000"), destination: .file(file, offset: 0)))
        #expect(whole.2 == nil)
        #expect(try Data(contentsOf: file) == TestPattern.bytes(20000))
        // A 200 is the whole body: it replaces the file, whatever the offset.
        _ = await exchange(transport, TransportRequest(try url("/pattern?n=500"), destination: .file(file, offset: 1000)))
        #expect(try Data(contentsOf: file) == TestPattern.bytes(500))
        // An error status leaves the file alone and delivers its body.
        let failed = await exchange(
            transport,
            TransportRequest(
                try url("/flaky?key=\(Fixture.uniqueKey("file"))&fail=1"),
                destination: .file(file, offset: 0)))
        #expect(failed.0?.statusCode == 503 && !failed.1.isEmpty)
        #expect(try Data(contentsOf: file) == TestPattern.bytes(500))
    }

    @Test func aBodyStreamsFromAFile() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tern-upload-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try Data(#"{"from":"file"}"#.utf8).write(to: file)
        var request = try url("/echo")
        request.httpMethod = "POST"
        var transportRequest = TransportRequest(request)
        transportRequest.body = .file(file)
        let (_, body, error) = await exchange(sessionTransport(), transportRequest)
        #expect(error == nil)
        #expect(try JSON(data: body)["body"]?.string == #"{"from":"file"}"#)
    }

    @Test(arguments: [false, true])
    func redirectsComeBackUnfollowed(streamed: Bool) async throws {
        let request = TransportRequest(try url("/redirect?status=307&to=/json"), streamsBody: streamed)
        let (response, _, error) = await exchange(sessionTransport(), request)
        #expect(error == nil)
        #expect(response?.statusCode == 307)
        #expect(response?.value(forHTTPHeaderField: "Location") == "/json")
    }

    @Test func stubsHonourTheLimitAndTheFileDestination() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/big"), .data(Data(repeating: 9, count: 300)))
        let big = URLRequest(url: URL(string: "https://api.test/big")!)
        #expect(await exchange(stubs, TransportRequest(big, destination: .memory(limit: 100))).2?.code == .dataLengthExceedsMaximum)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tern-stub-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        _ = await exchange(stubs, TransportRequest(big, destination: .file(file, offset: 0)))
        #expect(try Data(contentsOf: file) == Data(repeating: 9, count: 300))
    }

    @Test func anAppsOwnClientOptsIntoCancelOlderForOneLineGets() async throws {
        let key = Fixture.uniqueKey("one-line")
        let client = Client(baseURL: try TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.oneLineGetStrategy = .cancelOlder
        }
        let outcomes = Outcomes()
        client.get("counted", parameters: ["key": key, "seconds": 0.3]) { outcomes.record(0, $0) }
        client.get("counted", parameters: ["key": key, "seconds": 0.3]) { outcomes.record(1, $0) }
        await outcomes.wait(for: 2)
        #expect(outcomes.of(0).map(\.failure) == [.cancelled(.superseded)])
        #expect(outcomes.of(1).first?.success?.statusCode == 200)
        #expect(Client.shared.configuration.oneLineGetStrategy == .cancelOlder)
        #expect(ClientConfiguration().oneLineGetStrategy == nil)
    }
}
