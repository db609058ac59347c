import Foundation
import Testing

@testable import Tern

/// The process stage on its own: validation, decoding and where they run, on values. No
/// transport, no client.
@Suite struct ProcessStageTests {
    static let url = URL(string: "http://127.0.0.1:9/items")!
    static let started = (date: Date(), uptime: DispatchTime.now().uptimeNanoseconds)

    func stage<Value>(_ serializer: ResponseSerializer<Value>) -> ProcessStage<Value> {
        ProcessStage(
            serializer: serializer, validation: .default, method: .get, destination: .memory,
            request: URLRequest(url: Self.url), started: Self.started)
    }

    func raw(_ status: Int, _ body: String, source: ResponseSource = .network) -> RawResponse {
        let head = ResponseHead(url: Self.url, statusCode: status, headerFields: ["Content-Type": "application/json"])
        return RawResponse(head: head, data: Data(body.utf8), source: source)
    }

    @Test func aValidBodyBecomesTheResponseOfItsAttempt() throws {
        var route = RequestLifecycle.Route()
        route.attempt = 2
        route.redirects = [Redirect(statusCode: 302, from: Self.url, to: Self.url)]
        let response = try stage(.json).process(.success(raw(200, #"{"n": 3}"#)), route: route).get()
        #expect(response.value["n"]?.int == 3)
        #expect(response.attempt == 2 && response.redirects.count == 1 && response.request.url == Self.url)
    }

    @Test func aRefusedStatusKeepsItsBodyUnlessARuleAcceptedIt() throws {
        let outcome = Result<RawResponse, TernError>.success(raw(503, #"{"error": "busy"}"#))
        let error = try #require(stage(.json).process(outcome, route: nil).failure)
        guard case .unacceptableStatus(503, let body, _, _) = error else {
            Issue.record("expected the 503, got \(error)")
            return
        }
        #expect(String(decoding: body, as: UTF8.self) == #"{"error": "busy"}"#)
        #expect(try stage(.json).process(outcome, route: nil, validating: false).get().value["error"]?.string == "busy")
    }

    @Test func aBodyThatDoesNotDecodeIsADecodingErrorWithTheBody() throws {
        let error = try #require(stage(.json).process(.success(raw(200, "{not json")), route: nil).failure)
        guard case .decoding(_, let body) = error else {
            Issue.record("expected a decoding error, got \(error)")
            return
        }
        #expect(body == Data("{not json".utf8))
    }

    /// Small bodies through Tern's own serializers stay on the thread that produced them; user
    /// code, large bodies and slow stores leave it.
    @Test func onlyWorkThatMayBeSlowLeavesTheTransportsThread() {
        let small = Result<RawResponse, TernError>.success(raw(200, "[1]"))
        let large = Result<RawResponse, TernError>.success(raw(200, "[" + String(repeating: "1,", count: 9_000) + "1]"))
        let json = stage(.json)
        #expect(!json.runsElsewhere(small, hasResponseHooks: false, mayBeSlowToStore: false))
        #expect(json.runsElsewhere(large, hasResponseHooks: false, mayBeSlowToStore: false))
        #expect(json.runsElsewhere(small, hasResponseHooks: true, mayBeSlowToStore: false))
        #expect(json.runsElsewhere(small, hasResponseHooks: false, mayBeSlowToStore: true))
        let cached = Result<RawResponse, TernError>.success(raw(200, "[1]", source: .cache))
        #expect(!json.runsElsewhere(cached, hasResponseHooks: false, mayBeSlowToStore: true))
        #expect(!json.runsElsewhere(.failure(.timedOut(after: 1)), hasResponseHooks: false, mayBeSlowToStore: true))
        let custom = stage(ResponseSerializer<Data>(acceptableContentTypes: nil, emptyValue: nil) { data, _ in data })
        #expect(custom.runsElsewhere(small, hasResponseHooks: false, mayBeSlowToStore: false))
    }
}
