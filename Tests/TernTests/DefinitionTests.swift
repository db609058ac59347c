import Foundation
import Testing
@testable import Tern

/// Endpoint definitions in API groups, against httpbin: every callback style, group defaults
/// between the client's and the endpoint's, the client's body encoding and decoder, and a base
/// URL switched while a request is in flight.
@Suite struct DefinitionTests {
    /// httpbin's echo of a GET, in a group that adds a header and a tag.
    struct Echo: Endpoint {
        typealias Value = JSON
        let group: APIGroup
        let text: String
        var path: String { "anything/echo" }
        var parameters: Parameters { ["q": text] }
        var tags: Set<String> { ["echo"] }
    }

    /// A POST whose parameters go to the body in the group's or client's encoding.
    struct Create: Endpoint {
        typealias Value = JSON
        let group: APIGroup
        var path: String { "anything/create" }
        var method: HTTPMethod { .post }
        var parameters: Parameters { ["name": "北京", "count": 2] }
    }

    /// httpbin's `/response-headers` echoes its query as JSON: snake_case keys to decode.
    struct Shown: Decodable, Sendable { let displayName: String }
    struct ShowName: Endpoint {
        typealias Value = Shown
        let group: APIGroup
        var path: String { "response-headers" }
        var parameters: Parameters { ["display_name": "Tern"] }
    }

    private func group(_ configure: (inout APIGroup.Settings) -> Void = { _ in }) throws -> APIGroup {
        APIGroup("httpbin", baseURL: try TestServers.httpbin()) {
            $0.headers["X-Team"] = "weather"
            $0.tags = ["team"]
            configure(&$0)
        }
    }

    private let client = Client(baseURL: nil) {
        $0.callbackQueue = .immediate; $0.headers["X-Client"] = "tern"
    }

    @Test func aDefinitionIsSentInEveryCallbackStyle() async throws {
        let echo = Echo(group: try group(), text: "bei")
        let viaAsync = try await client.send(echo).value
        let (viaClosure, _) = await client.completionResult(echo)
        let viaPair = await client.pairResult(echo)
        let viaDelegate = await client.delegateResult(echo)
        for json in [viaAsync, try viaClosure.get().value, try viaPair.get(), try #require(try viaDelegate.get().value as? JSON)] {
            #expect(json["args"]?["q"]?.string == "bei")
            #expect(json["headers"]?["X-Team"]?.string == "weather")
            #expect(json["headers"]?["X-Client"]?.string == "tern")
            #expect(json["url"]?.string?.hasSuffix("/anything/echo?q=bei") == true)
        }
    }

    @Test func groupTagsAndEndpointTagsBothCancel() async throws {
        var slow = Echo(group: try group(), text: "slow").makeRequest()
        slow.url = "delay/5"
        let handle = client.send(slow) { _ in }
        #expect(handle.tags == ["team", "echo"])
        #expect(client.cancel(tag: "team") == 1)
    }

    @Test func postParametersFollowTheClientsBodyEncoding() async throws {
        let jsonClient = Client(baseURL: nil) {
            $0.callbackQueue = .immediate; $0.bodyEncoding = .json
        }
        let asJSON = try await jsonClient.send(Create(group: try group())).value
        #expect(asJSON["json"]?["name"]?.string == "北京")
        #expect(asJSON["json"]?["count"]?.int == 2)
        let asForm = try await client.send(Create(group: try group())).value
        #expect(asForm["form"]?["name"]?.string == "北京")
        // The group's encoding wins over the client's; a plain request can ask for it too.
        let groupJSON = try await client.send(Create(group: try group { $0.bodyEncoding = .json })).value
        #expect(groupJSON["json"]?["count"]?.int == 2)
        let plain = try await jsonClient.send(
            Request<JSON>(
                try TestServers.httpbin() + "/post", method: .post,
                body: .parameters(["a": true]))
        ).value
        #expect(plain["json"]?["a"]?.bool == true)
    }

    @Test func decodablesUseTheGroupsOrTheClientsDecoder() async throws {
        let snake = JSONDecoder()
        snake.keyDecodingStrategy = .convertFromSnakeCase
        let viaClient = Client(baseURL: nil) {
            $0.callbackQueue = .immediate; $0.decoder = snake
        }
        #expect(try await viaClient.send(ShowName(group: try group())).value.displayName == "Tern")
        #expect(try await client.send(ShowName(group: try group { $0.decoder = snake })).value.displayName == "Tern")
        // Without one, a plain decoder: the snake_case key is missing.
        await #expect(throws: TernError.self) { try await client.send(ShowName(group: try group())) }
    }

    @Test func switchingTheBaseURLLeavesRequestsInFlightAlone() async throws {
        let group = try group()
        var slow = Echo(group: group, text: "first").makeRequest()
        slow.url = "delay/1"
        let outcomes = Outcomes()
        client.send(slow) { outcomes.record(0, $0) }
        group.baseURL = try TestServers.fixture()  // e.g. a debug menu's switch to a mock server
        let next = try await client.send(Request<JSON>("echo", query: ["q": "second"]).inGroup(group))
        await outcomes.wait(for: 1)
        let first = try #require(outcomes.of(0).first).get()
        #expect(first.url?.absoluteString.hasPrefix(try TestServers.httpbin()) == true)
        #expect(next.url?.absoluteString.hasPrefix(try TestServers.fixture()) == true)
        #expect(next.value["rawQuery"]?.string == "q=second")
    }

    /// An endpoint's own timeout and deadline reach its request, over its group's.
    struct Patient: Endpoint {
        typealias Value = JSON
        let group: APIGroup
        var path: String { "anything/patient" }
        var timeout: TimeInterval? { 30 }
        var deadline: TimeInterval? { 120 }
    }

    @Test func anEndpointSetsItsOwnTimeoutAndDeadline() throws {
        let group = try group { $0.deadline = 5 }
        let request = Patient(group: group).makeRequest()
        #expect(request.timeout == 30 && request.deadline == 120)
        let options = CallOptions(request, client: client)
        #expect(options.timeout == 30 && options.deadline == 120)
        #expect(CallOptions(Echo(group: group, text: "x").makeRequest(), client: client).deadline == 5)
    }

    @Test func theGroupsSettingsSitBetweenTheClientsAndTheRequests() async throws {
        let group = try group {
            $0.headers["X-Client"] = "group"; $0.timeout = 2
        }
        var request = Echo(group: group, text: "x").makeRequest()
        #expect(CallOptions(request, client: client).timeout == 2)
        // The echo gets room of its own: at the start of a parallel pass on two loaded cores a
        // plain echo has waited more than 2 s for its first byte.
        request.timeout = 30
        let echoed = try await client.send(request).value
        #expect(echoed["headers"]?["X-Client"]?.string == "group")
        request.timeout = nil
        request.url = "delay/5"
        let error = await #expect(throws: TernError.self) { try await client.send(request) }
        #expect(error?.isTimeout == true)
        request.timeout = 10
        request.url = "delay/1"
        request.headers["X-Client"] = "request"
        #expect(try await client.send(request).value["headers"]?["X-Client"]?.string == "request")
    }
}

extension Request {
    /// A copy in `group`.
    func inGroup(_ group: APIGroup) -> Request {
        var copy = self
        copy.group = group
        return copy
    }
}
