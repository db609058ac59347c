import Foundation
import Testing
@testable import Tern

/// Behaviour against httpbin, the independent reference server, over real loopback HTTP.
@Suite struct HTTPBinTests {
    let client: Client

    init() throws {
        let base = try TestServers.httpbin()
        client = Client(baseURL: base) { $0.callbackQueue = .immediate }
    }

    @Test func getEchoesAwkwardQueryValuesExactly() async throws {
        let values: Parameters = [
            "cjk": "北京市", "emoji": "🌧☀️", "plus": "a+b", "amp": "x&y", "eq": "k=v",
            "hash": "#frag", "space": "two words", "slash": "a/b?c",
        ]
        let response = try await client.get("get?existing=1", parameters: values)
        let args = try #require(response.json["args"]?.object)
        for (key, value) in values { #expect(args[key]?.string == value as? String, "key \(key)") }
        #expect(args["existing"]?.string == "1")
        let query = try #require(response.request.url?.query)
        #expect(query.hasPrefix("amp=") && query.contains("existing=1"))
    }

    @Test func getEncodesArraysNestedDictionariesAndBools() async throws {
        let response = try await client.get("get", parameters: ["tags": ["a", "b"], "filter": ["min": 1], "flag": true])
        let args = try #require(response.json["args"])
        #expect(args["tags[]"]?.array == [.string("a"), .string("b")])
        #expect(args["filter[min]"]?.string == "1")
        #expect(args["flag"]?.string == "true")
    }

    @Test func postEchoesFormAndJSONBodies() async throws {
        let form = try await client.post("post", parameters: ["name": "张三 & co", "n": 3])
        #expect(form.json["form"]?["name"]?.string == "张三 & co")
        #expect(form.json["form"]?["n"]?.string == "3")
        #expect(form.json["headers"]?["Content-Type"]?.string?.hasPrefix("application/x-www-form-urlencoded") == true)

        let json = try await client.post("post", parameters: ["name": "李四", "tags": ["x"], "none": NSNull()], encoding: .json)
        #expect(json.json["json"] == .object(["name": .string("李四"), "tags": .array([.string("x")]), "none": .null]))
        #expect(json.json["headers"]?["Content-Type"]?.string == "application/json")
    }

    /// The one-line `post` sends the client's `bodyEncoding` unless it is told otherwise.
    @Test func theOneLinePostFollowsTheClientsBodyEncoding() async throws {
        let jsonClient = Client(baseURL: try TestServers.httpbin()) {
            $0.callbackQueue = .immediate
            $0.bodyEncoding = .json
        }
        let json = try await jsonClient.post("post", parameters: ["name": "李四"]).json
        #expect(json["json"]?["name"]?.string == "李四")
        #expect(json["headers"]?["Content-Type"]?.string?.hasPrefix("application/json") == true)
        let form = try await jsonClient.post("post", parameters: ["name": "李四"], encoding: .form).json
        #expect(form["form"]?["name"]?.string == "李四")
    }

    @Test func postsAnEncodableBodyAndDecodesADecodableResponse() async throws {
        struct Payload: Codable, Sendable, Equatable { let city: String; let days: Int }
        struct Echo: Decodable, Sendable { let json: Payload }
        let request = Request<Echo>("post", method: .post, body: .json(Payload(city: "上海", days: 3)))
        let response = try await client.send(request)
        #expect(response.value.json == Payload(city: "上海", days: 3))
        #expect(response.statusCode == 200)
        #expect(response.timing.duration > 0)
    }

    @Test func clientAndRequestHeadersAreSentWithTernsWireHeaders() async throws {
        let client = Client(baseURL: try TestServers.httpbin()) {
            $0.headers = ["X-Team": "weather", "X-Override": "client"]
            $0.callbackQueue = .immediate
        }
        let response = try await client.send(Request<JSON>("headers", headers: ["X-Override": "request"]))
        let headers = try #require(response.json["headers"])
        #expect(headers["X-Team"]?.string == "weather")
        #expect(headers["X-Override"]?.string == "request")
        #expect(headers["User-Agent"]?.string == "Tern/\(Client.version)")
        // libcurl also offers zstd when it decodes it (ContentEncodingTests).
        let encodings = headers["Accept-Encoding"]?.string
        #expect(encodings == "gzip, deflate, br" || encodings == "gzip, deflate, br, zstd", "\(encodings ?? "none")")
    }

    @Test(arguments: [404, 500])
    func errorStatusGivesTheStatusErrorWithTheBody(code: Int) async throws {
        let result = await client.completionResult(Request<JSON>("status/\(code)"))
        let error = try #require(result.0.failure)
        #expect(error.statusCode == code)
        guard case .unacceptableStatus = error else { Issue.record("wrong error \(error)"); return }
    }

    @Test func statusErrorCarriesTheBody() async throws {
        let result = await client.completionResult(Request<JSON>("anything", method: .get, query: ["x": 1]))
        #expect(result.0.success != nil)
        let teapot = await client.completionResult(Request<String>("status/418"))
        let body = try #require(teapot.0.failure?.responseBody)
        #expect(String(decoding: body, as: UTF8.self).contains("teapot"))
    }

    @Test(arguments: [1.0, 0.5])
    func delayBeyondTheTimeoutGivesTheTimeoutErrorInAboutThatTime(timeout: Double) async throws {
        let (result, elapsed) = await client.timedResult(Request<JSON>("delay/10", timeout: timeout))
        let error = try #require(result.failure)
        #expect(error == .timedOut(after: timeout), "got \(error)")
        // Generous upper bound: only proves the deadline, not the server (10 s), ended the request
        // (a loaded parallel pass on URLSession once took 3 s to hand over a 1 s timeout).
        #expect(elapsed >= timeout * 0.9 && elapsed < timeout + 5, "took \(elapsed) s; the server answers after 10 s")
    }

    @Test(arguments: ["gzip", "deflate", "brotli"])
    func compressedBodiesAreDecoded(path: String) async throws {
        let response = try await client.send(Request<JSON>(path))
        let flag = path == "gzip" ? "gzipped" : path == "deflate" ? "deflated" : "brotli"
        #expect(response.json[flag]?.bool == true)
    }

    @Test func utf8TextDecodesWithTheResponseCharset() async throws {
        let response = try await client.send(Request<String>("encoding/utf8"))
        #expect(response.value.contains("∮ E⋅da = Q"))
    }

    @Test func htmlWithTheJSONSerializerIsAContentTypeError() async throws {
        let result = await client.completionResult(Request<JSON>("html"))
        guard case .unacceptableContentType(let type, let body) = try #require(result.0.failure) else {
            Issue.record("expected a content-type error, got \(result.0)"); return
        }
        #expect(type?.hasPrefix("text/html") == true)
        #expect(!body.isEmpty)
    }

    @Test func htmlWithTheStringFallbackIsTheBodyAsText() async throws {
        let response = try await client.send(Request<JSON>("html", serializer: .json(fallbackToString: true)))
        #expect(response.value.string?.contains("Herman Melville") == true)
    }

    @Test func redirectsAreFollowed() async throws {
        let response = try await client.send(Request<JSON>("redirect/3"))
        #expect(response.statusCode == 200)
        #expect(response.httpResponse.url?.path == "/get")
    }

    @Test func basicAuthWithoutCredentialsCompletesWith401() async throws {
        let result = await client.completionResult(Request<JSON>("basic-auth/u/p", timeout: 10))
        #expect(result.0.failure?.statusCode == 401, "got \(result.0)")
    }

    @Test func basicAuthWithCredentialsSucceeds() async throws {
        let client = Client(baseURL: try TestServers.httpbin()) {
            $0.transportSettings.credential = BasicCredential(user: "u", password: "p")
        }
        let response = try await client.send(Request<JSON>("basic-auth/u/p", timeout: 10))
        #expect(response.json["authenticated"]?.bool == true)
        #expect(response.json["user"]?.string == "u")
    }

    @Test func noContentAndHeadGiveEmptyBodiesWithoutError() async throws {
        let noContent = try await client.send(Request<JSON>("status/204"))
        #expect(noContent.value == .null && noContent.data.isEmpty)
        struct Thing: Decodable, Sendable { let x: Int }
        let optional = try await client.send(Request<Thing?>("status/204"))
        #expect(optional.value == nil)
        let empty = try await client.send(Request<Empty>("status/204", method: .delete))
        #expect(empty.statusCode == 204)
        let head = try await client.send(Request<JSON>("get", method: .head))
        #expect(head.statusCode == 200 && head.data.isEmpty)
    }

    @Test func largeBodiesArriveIntact() async throws {
        // httpbin caps /bytes at 100 KiB: the whole capped body must arrive, matching Content-Length.
        let random = try await client.send(Request<Data>("bytes/1048576"))
        #expect(random.data.count == Int(random.header("Content-Length") ?? "") && random.data.count == 102_400)
        // Byte-exact megabyte from the fixture server.
        let pattern = try await client.send(Request<Data>(try TestServers.fixture() + "/pattern", query: ["n": 1_048_576]))
        #expect(pattern.data == TestPattern.bytes(1_048_576))
    }

    @Test func everyMethodIsSent() async throws {
        for method in [HTTPMethod.get, .post, .put, .patch, .delete] {
            let response = try await client.send(Request<JSON>("anything", method: method))
            #expect(response.json["method"]?.string == method.rawValue)
        }
    }
}
