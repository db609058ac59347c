import Foundation
import Testing
import Tern
import TernStubs

/// TernStubs plays an offline period and the return of the network, for an app's outbox flows.
@Suite struct StubOfflineTests {
    @Test func anOutboxWaitsWhileTheStubNetworkIsOfflineAndSendsWhenItReturns() async throws {
        let stubs = StubTransport()
        stubs.stub(.post("/v1/favourites"), .status(201))
        let api = Client(baseURL: "https://api.test/v1") {
            $0.transport = stubs
            $0.callbackQueue = .immediate
        }
        var configuration = OutboxConfiguration()
        configuration.directory = FileManager.default.temporaryDirectory.appendingPathComponent("stub-outbox-\(UUID().uuidString)")
        configuration.networkMonitor = stubs.networkMonitor
        let outbox = try Outbox(client: api, configuration: configuration)
        defer { outbox.close() }

        stubs.goOffline()
        let failure = await api.sendResult(Request<Data>("weather"))
        guard case .transport(let error)? = failure.failure else { Issue.record("expected a transport error"); return }
        #expect(error.code == .notConnectedToInternet)
        let id = try outbox.enqueue(Request<Data>("favourites", method: .post, body: .json(["city": "成都"])))
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(stubs.received(.post("/v1/favourites")).isEmpty)
        #expect(outbox.pendingCount == 1)

        stubs.goOnline()
        #expect(await outbox.outcome(of: id)?.state == .delivered(statusCode: 201))
        let sent = try #require(stubs.received(.post("/v1/favourites")).first)
        #expect(sent.value(forHTTPHeaderField: "Idempotency-Key")?.count == 38)
    }
}

extension Client {
    fileprivate func sendResult<Value>(_ request: Request<Value>) async -> Result<Response<Value>, TernError> {
        do { return .success(try await send(request)) } catch { return .failure(error) }
    }
}
