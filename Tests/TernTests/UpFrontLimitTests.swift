import Foundation
import Testing

@testable import Tern

/// A response that announces more than the size limit is refused as its head arrives, before
/// any body: the fixture sends a 2 GB `Content-Length` and then nothing for 20 s, so only the
/// check of the announced length can end the request in time (the check of each chunk never
/// runs, and the idle timeout is 10 s).
@Suite struct UpFrontLimitTests {
    @Test(arguments: TransportKind.all)
    func anAnnouncedLengthOverTheLimitIsRefusedBeforeAnyBody(over transport: TransportKind) async throws {
        let client = transport.client(try TestServers.fixture()) { $0.maximumResponseSize = 1 << 20 }
        let (result, seconds) = await client.timedResult(Request<Data>("huge", query: ["announce": 2_147_483_648, "silent": 20]))
        #expect(result.failure == .responseTooLarge(limit: 1 << 20), "\(result)")
        // Unchecked, the request would end with the idle timeout's `.timedOut` (10 s) above, or
        // wait out the 20 s of silence; under ThreadSanitizer in a loaded pass the refusal itself
        // took up to 8.2 s on URLSession.
        #expect(seconds < 15, "refused after \(seconds) s: the announced length was not checked")
    }

    @Test(arguments: TransportKind.all)
    func anAnnouncedLengthWithinTheLimitIsNotRefused(over transport: TransportKind) async throws {
        let client = transport.client(try TestServers.fixture()) { $0.maximumResponseSize = 1 << 20 }
        let response = try await client.send(Request<Data>("pattern", query: ["n": 1 << 20]))
        #expect(response.value.count == 1 << 20)
    }
}
