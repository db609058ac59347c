import Foundation
import Testing
@testable import Tern

/// The URLSession transport's two delivery modes give the same results and the same errors.
@Suite struct DeliveryModeTests {
    static let modes: [URLSessionTransport.Delivery] = [.buffered, .streamed]

    func client(_ base: String, _ mode: URLSessionTransport.Delivery, credential: BasicCredential? = nil) -> Client {
        Client(baseURL: base) {
            $0.callbackQueue = .immediate
            $0.transportSettings.urlSession.delivery = mode
            $0.transportSettings.credential = credential
        }
    }

    @Test(arguments: modes)
    func basicAuthWithAndWithoutCredentials(mode: URLSessionTransport.Delivery) async throws {
        let base = try TestServers.httpbin()
        let refused = await client(base, mode).completionResult(Request<JSON>("basic-auth/u/p", timeout: 10))
        #expect(refused.0.failure?.statusCode == 401, "\(mode): \(refused.0)")
        let signedIn = try await client(base, mode, credential: BasicCredential(user: "u", password: "p"))
            .send(Request<JSON>("basic-auth/u/p", timeout: 10))
        // The body must be the authenticated answer alone, not the 401 body followed by it.
        #expect(signedIn.json["authenticated"]?.bool == true, "\(mode)")
        let wrong = await client(base, mode, credential: BasicCredential(user: "u", password: "wrong"))
            .completionResult(Request<JSON>("basic-auth/u/p", timeout: 10))
        #expect(wrong.0.failure?.statusCode == 401, "\(mode): \(wrong.0)")
    }

    @Test(arguments: modes)
    func bodiesArriveWholeAndInOrder(mode: URLSessionTransport.Delivery) async throws {
        let fixture = client(try TestServers.fixture(), mode)
        let pattern = try await fixture.send(Request<Data>("pattern", query: ["n": 3_000_000]))
        #expect(pattern.data == TestPattern.bytes(3_000_000))
        let drip = try await fixture.send(Request<String>("drip", query: ["chunks": 3, "interval": 0.05]))
        #expect(drip.value == "chunk000chunk001chunk002")
    }

    @Test(arguments: modes)
    func faultsGiveTheSameErrors(mode: URLSessionTransport.Delivery) async throws {
        let fixture = client(try TestServers.fixture(), mode)
        guard case .transport = await fixture.completionResult(Request<JSON>("truncated", timeout: 10)).0.failure else {
            Issue.record("\(mode): truncated body should be a transport error"); return
        }
        guard case .transport = await fixture.completionResult(Request<JSON>("reset", timeout: 10)).0.failure else {
            Issue.record("\(mode): reset should be a transport error"); return
        }
        let stalled = await fixture.completionResult(Request<Data>("stall-body", query: ["seconds": 3], timeout: 0.4))
        #expect(stalled.0.failure?.isTimeout == true, "\(mode): \(stalled.0)")
    }

    @Test(arguments: modes)
    func redirectsEmptyBodiesAndCancellation(mode: URLSessionTransport.Delivery) async throws {
        let httpbin = client(try TestServers.httpbin(), mode)
        #expect(try await httpbin.send(Request<JSON>("redirect/2")).statusCode == 200)
        #expect(try await httpbin.send(Request<JSON>("status/204")).value == .null)
        let task = Task { try await httpbin.send(Request<JSON>("delay/3")) }
        try await Task.sleep(milliseconds: 200)
        task.cancel()
        guard case .failure(let error as TernError) = await task.result else { Issue.record("\(mode): expected cancel"); return }
        #expect(error == .cancelled(.explicit))
    }
}
