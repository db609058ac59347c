import Foundation
import Testing
@testable import Tern

/// Misbehaving servers (Tern's fixture server): every fault ends in one clear, typed error.
@Suite struct FaultTests {
    let client: Client

    init() throws {
        client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
    }

    @Test func truncatedBodyIsATransportError() async throws {
        let error = try #require(await client.completionResult(Request<JSON>("truncated", timeout: 10)).0.failure)
        guard case .transport = error else { Issue.record("expected a transport error, got \(error)"); return }
    }

    @Test func connectionResetIsATransportError() async throws {
        let error = try #require(await client.completionResult(Request<JSON>("reset", timeout: 10)).0.failure)
        guard case .transport(let urlError) = error else { Issue.record("expected a transport error, got \(error)"); return }
        #expect(error.underlyingError == urlError)
    }

    @Test func malformedJSONIsADecodingErrorWithTheBody() async throws {
        let error = try #require(await client.completionResult(Request<JSON>("malformed-json")).0.failure)
        guard case .decoding(_, let body) = error else { Issue.record("expected a decoding error, got \(error)"); return }
        #expect(String(decoding: body, as: UTF8.self) == #"{"city": "Bei"#)
    }

    @Test func malformedJSONFallsBackToTextWhenAskedTo() async throws {
        let response = try await client.send(Request<JSON>("malformed-json", serializer: .json(fallbackToString: true)))
        #expect(response.value == .string(#"{"city": "Bei"#))
    }

    @Test func stallBeforeHeadersTimesOut() async throws {
        let (result, seconds) = await client.timedResult(Request<JSON>("stall", query: ["seconds": 10], timeout: 0.3))
        #expect(result.failure == .timedOut(after: 0.3))
        #expect(seconds < 2, "the 10 s stall must not be waited out (took \(seconds) s)")
    }

    @Test func stallInsideTheBodyTimesOut() async throws {
        let error = try #require(await client.completionResult(Request<Data>("stall-body", query: ["seconds": 5], timeout: 0.5)).0.failure)
        #expect(error.isTimeout, "got \(error)")
    }

    /// Chunks 0.1 s apart keep an idle timeout from firing. The timeout is generous: in a loaded
    /// parallel pass on URLSession, 5 s once passed without a chunk handed over.
    @Test func slowDripWithinTheDeadlineArrivesWhole() async throws {
        let response = try await client.send(Request<String>("drip", query: ["chunks": 4, "interval": 0.1], timeout: 15))
        #expect(response.value == "chunk000chunk001chunk002chunk003")
    }

    @Test func missingContentTypeIsRejectedByJSONButNotByData() async throws {
        let error = try #require(await client.completionResult(Request<JSON>("no-content-type")).0.failure)
        guard case .unacceptableContentType(nil, _) = error else { Issue.record("got \(error)"); return }
        let data = try await client.send(Request<Data>("no-content-type"))
        #expect(data.data == Data(#"{"ok": true}"#.utf8))
        var lenient = Request<JSON>("no-content-type")
        lenient.validation = ResponseValidation(acceptableContentTypes: ["*/*"])
        #expect(try await client.send(lenient).json["ok"]?.bool == true)
    }

    @Test func charsetFromTheResponseIsUsed() async throws {
        #expect(try await client.send(Request<String>("latin1")).value == "café")
    }

    @Test func emptyJSONBodyOn200IsADecodingError() async throws {
        let error = try #require(await client.completionResult(Request<JSON>("empty-json")).0.failure)
        guard case .decoding = error else { Issue.record("got \(error)"); return }
    }

    @Test func connectionRefusedIsATransportError() async throws {
        let error = try #require(await client.completionResult(Request<JSON>("http://127.0.0.1:9/nothing")).0.failure)
        #expect(error.underlyingError?.code == .cannotConnectToHost)
    }

    /// Every refused status keeps its body — a 401 Basic refused for want of a credential too
    /// (it used to arrive with 0 bytes: URLSession drops the buffered body of a cancelled challenge).
    @Test(arguments: [400, 401, 403, 404, 409, 422, 429, 500, 502, 503])
    func everyRefusedStatusKeepsItsBody(status: Int) async throws {
        let request =
            status == 401
            ? Request<JSON>("basic-401", timeout: 10)
            : Request<JSON>("flaky", query: ["key": Fixture.uniqueKey("status-\(status)"), "fail": 1, "status": status], timeout: 10)
        let error = try #require(await client.completionResult(request).0.failure)
        #expect(error.statusCode == status)
        let body = try JSON(data: try #require(error.responseBody))
        #expect(body["error"] != nil, "status \(status): \(error)")
    }
}
