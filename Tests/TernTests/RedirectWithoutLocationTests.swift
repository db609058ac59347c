import Foundation
import Testing

@testable import Tern

/// A 3xx whose `Location` cannot be followed ends the same way on every transport.
@Suite struct RedirectWithoutLocationTests {
    static func send(_ location: String, over transport: TransportKind) async throws -> Result<Response<Data>, TernError> {
        let client = transport.client(try TestServers.fixture())
        return await client.completionResult(Request<Data>("redirect-nowhere", query: ["location": location])).0
    }

    /// No `Location`, or one that is not a URL: the 3xx is the final response, delivered as a
    /// status error with its body and headers, as curl and browsers treat it. URLSession on Linux
    /// keeps the body of a 301–308 to itself and tells no delegate of its head: the error is the
    /// same, with the head's headers and an empty body.
    @Test(arguments: TransportKind.all, ["none", "garbage"])
    func aRedirectWithoutAUsableLocationIsTheFinalResponse(over transport: TransportKind, _ location: String) async throws {
        let result = try await Self.send(location, over: transport)
        guard case .failure(.unacceptableStatus(let code, let body, let headers, _)) = result else {
            Issue.record("\(location): expected .unacceptableStatus(302), got \(result)")
            return
        }
        #expect(code == 302)
        #expect(headers.keys.contains { $0.lowercased() == "location" } == (location != "none"))
        #if os(Linux)
        if transport == .urlSession { return #expect(body.isEmpty) }
        #endif
        #expect(body == Data(#"{"moved": "nowhere"}"#.utf8))
    }

    /// URLSession's buffered delivery (a completion handler per task) ends the same way.
    @Test func aBufferedURLSessionTaskEndsTheSameWay() async throws {
        let client = TransportKind.urlSession.client(try TestServers.fixture()) { $0.transportSettings.urlSession.delivery = .buffered }
        let result = await client.completionResult(Request<Data>("redirect-nowhere", query: ["location": "none"])).0
        guard case .failure(.unacceptableStatus(302, _, _, _)) = result else {
            Issue.record("expected .unacceptableStatus(302), got \(result)")
            return
        }
    }

    /// A `Location` that is a URL of another scheme is refused as a redirect.
    @Test(arguments: TransportKind.all)
    func aRedirectToAnotherSchemeIsRefused(over transport: TransportKind) async throws {
        let result = try await Self.send("ftp", over: transport)
        guard case .failure(.redirectFailed(.invalidLocation(let location, _))) = result else {
            Issue.record("expected .redirectFailed(.invalidLocation), got \(result)")
            return
        }
        #expect(location == "ftp://127.0.0.1/file")
    }
}
