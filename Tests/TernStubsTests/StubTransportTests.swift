import Foundation
import Testing
import Tern
import TernStubs

/// TernStubs' own tests: each feature through a real `Client`, on every platform the same.
@Suite struct StubTransportTests {
    let stubs = StubTransport()
    let client: Client

    init() {
        let stubs = self.stubs
        client = Client(baseURL: "https://api.test/v1") {
            $0.transport = stubs
            $0.callbackQueue = .immediate
        }
    }

    func result<Value>(_ request: Request<Value>) async -> Result<Response<Value>, TernError> {
        await withCheckedContinuation { continuation in client.send(request) { continuation.resume(returning: $0) } }
    }

    @Test func matchesMethodPathQueryAndAnswersJSON() async throws {
        stubs.stub(.get("/v1/weather").query(["city": "101010100"]), .json(["city": "北京", "temp": 3]))
        let response = try await client.send(Request<JSON>("weather", query: ["city": "101010100", "lang": "zh"]))
        #expect(response.json["city"]?.string == "北京")
        #expect(response.header("Content-Type") == "application/json")
        // Wrong method, wrong query: no match.
        let wrongMethod = await result(Request<JSON>("weather", method: .post, query: ["city": "101010100"]))
        #expect(wrongMethod.failure?.underlyingError?.code == .resourceUnavailable)
        let wrongQuery = await result(Request<JSON>("weather", query: ["city": "1"]))
        #expect(wrongQuery.failure?.underlyingError?.code == .resourceUnavailable)
    }

    /// The literals a request body takes, a stub answer takes: nested and mixed (as `JSON`
    /// literals), top-level arrays, `JSON` values, and dictionaries of Foundation values; a value
    /// that is not JSON is a 500 that says so, not a silent `null`.
    @Test func jsonAnswersTakeMixedLiteralsAndJSONValues() async throws {
        stubs.stub(.get("/v1/slideshow"), .json(["slideshow": ["title": "Demo", "slides": [["title": "one"]], "count": 3]]))
        stubs.stub(.get("/v1/list"), .json([1, "two", ["three": true], .null]))
        stubs.stub(.get("/v1/value"), .json(JSON.object(["ok": .bool(true)])))
        let notJSON: Parameters = ["when": Date(), "count": 1]  // a Date is Encodable, but not a JSON value
        stubs.stub(.get("/v1/bad"), .json(notJSON))
        let slideshow = try await client.send(Request<JSON>("slideshow")).value["slideshow"]
        #expect(slideshow?["title"]?.string == "Demo" && slideshow?["count"]?.int == 3)
        #expect(slideshow?["slides"]?[0]?["title"]?.string == "one")
        let list = try await client.send(Request<JSON>("list")).value
        #expect(list == .array([.int(1), .string("two"), .object(["three": .bool(true)]), .null]))
        #expect(try await client.send(Request<JSON>("value")).value["ok"] == .bool(true))
        let bad = await result(Request<String>("bad")).failure
        #expect(bad?.statusCode == 500, "\(String(describing: bad))")
        var explained = Request<String>("bad")
        explained.validation = ResponseValidation(acceptableStatusCodes: [500])
        #expect(try await client.send(explained).value.contains("is not a JSON value"))
    }

    @Test func anUnmatchedRequestFailsWithAnErrorNamingIt() async {
        let failure = await result(Request<JSON>("nowhere", query: ["x": 1])).failure
        let message = failure?.underlyingError?.localizedDescription ?? ""
        #expect(message.contains("no stub matches GET https://api.test/v1/nowhere?x=1"), "\(message)")
    }

    @Test func pathPatternsHostAndBodyConditions() async throws {
        stubs.stub(.get("/v1/cities/*/weather"), .string("one segment"))
        stubs.stub(.get("/v1/static/**"), .string("any depth"))
        stubs.stub(.post("/v1/login").body(.json(containing: ["user": .string("li")])), .json(["token": "t"]))
        stubs.stub(.any("/v1/echo").host("other.test"), .string("other host"))
        #expect(try await client.send(Request<String>("cities/42/weather")).value == "one segment")
        #expect(await result(Request<String>("cities/4/2/weather")).failure != nil)
        #expect(try await client.send(Request<String>("static/a/b/c.png")).value == "any depth")
        #expect(
            try await client.send(Request<JSON>("login", method: .post, body: .json(["user": "li", "pw": "x"]))).json["token"]
                == .string("t"))
        #expect(await result(Request<JSON>("login", method: .post, body: .json(["user": "wang"]))).failure != nil)
        #expect(try await client.send(Request<String>("https://other.test/v1/echo", method: .put)).value == "other host")
        #expect(await result(Request<String>("echo")).failure != nil)
    }

    @Test func statusHeadersFilesAndEmptyBodies() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("stub-\(UUID().uuidString).json")
        try Data(#"{"from": "file"}"#.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        stubs.stub(.get("/v1/file"), .file(file, contentType: "application/json"))
        stubs.stub(.get("/v1/teapot"), StubResponse(status: 418, headers: ["X-Why": "tea"], body: Data("short and stout".utf8)))
        stubs.stub(.any("/v1/gone"), .status(204))
        #expect(try await client.send(Request<JSON>("file")).json["from"]?.string == "file")
        let teapot = await result(Request<String>("teapot")).failure
        #expect(teapot?.statusCode == 418 && teapot?.responseBody == Data("short and stout".utf8))
        #expect(try await client.send(Request<JSON>("gone", method: .delete)).value == .null)
    }

    @Test func bodiesStateTheirLengthUnlessTheStubSaysOtherwise() async throws {
        stubs.stub(.get("/v1/sized"), .data(Data(count: 1234)))
        stubs.stub(.get("/v1/streamed"), StubResponse(headers: ["content-length": "99"], body: Data(count: 10)))
        #expect(try await client.send(Request<Data>("sized")).httpResponse.expectedContentLength == 1234)
        #expect(try await client.send(Request<Data>("streamed")).httpResponse.value(forHTTPHeaderField: "Content-Length") == "99")
    }

    @Test func sequencesServeEachResponseInTurnAndRepeatTheLast() async throws {
        stubs.stub(.get("/v1/flaky"), [.status(503), .status(502), .json(["ok": true])])
        #expect(await result(Request<JSON>("flaky")).failure?.statusCode == 503)
        #expect(await result(Request<JSON>("flaky")).failure?.statusCode == 502)
        #expect(try await client.send(Request<JSON>("flaky")).json["ok"]?.bool == true)
        #expect(try await client.send(Request<JSON>("flaky")).json["ok"]?.bool == true)
    }

    @Test(arguments: [URLError.Code.timedOut, .notConnectedToInternet, .networkConnectionLost])
    func transportFailures(code: URLError.Code) async {
        stubs.stub(.get("/v1/down"), .failure(code))
        let failure = await result(Request<JSON>("down")).failure
        if code == .timedOut {
            #expect(failure?.isTimeout == true)
        } else {
            #expect(failure?.underlyingError?.code == code)
        }
    }

    @Test func delaysAndChunksArriveInOrder() async throws {
        stubs.stub(.get("/v1/slow"), StubResponse.string("abcdefghij").delayed(by: 0.3).chunked(into: 5, every: 0.02))
        let started = Date()
        let response = try await client.send(Request<String>("slow"))
        #expect(response.value == "abcdefghij")
        #expect(Date().timeIntervalSince(started) >= 0.3)
    }

    @Test func chunksReachAStreamingConsumerAsSeparatePieces() async throws {
        let pieces = Locked<[Data]>([])
        let done = Locked(false)
        stubs.stub(.get("/v1/stream"), StubResponse.data(Data(repeating: 7, count: 100)).chunked(into: 4))
        _ = stubs.start(TransportRequest(URLRequest(url: URL(string: "https://api.test/v1/stream")!))) { event in
            switch event {
            case .data(let chunk): pieces.withLock { $0.append(chunk) }
            case .completed: done.withLock { $0 = true }
            default: break
            }
        }
        while !done.withLock({ $0 }) { try await Task.sleep(milliseconds: 5) }
        #expect(pieces.withLock { $0.map(\.count) } == [25, 25, 25, 25])
    }

    @Test func aBodyThatIsASliceOfOtherDataIsChunkedFromItsOwnStart() async throws {
        let whole = Data((0..<200).map { UInt8($0) })
        let pieces = Locked<[Data]>([])
        let done = Locked(false)
        stubs.stub(.get("/v1/rest"), StubResponse.data(whole.suffix(from: 120)).chunked(into: 4))
        _ = stubs.start(TransportRequest(URLRequest(url: URL(string: "https://api.test/v1/rest")!))) { event in
            switch event {
            case .data(let chunk): pieces.withLock { $0.append(chunk) }
            case .completed: done.withLock { $0 = true }
            default: break
            }
        }
        while !done.withLock({ $0 }) { try await Task.sleep(milliseconds: 5) }
        #expect(pieces.withLock { $0.reduce(Data(), +) } == whole.suffix(from: 120))
        #expect(pieces.withLock { $0.count } == 4)
    }

    @Test func cancellingAStubbedRequestEndsItAtOnce() async throws {
        stubs.stub(.get("/v1/slow"), StubResponse.string("late").delayed(by: 30))
        let endedAt = Locked<Date?>(nil)
        let task = Task {
            defer { endedAt.withLock { $0 = Date() } }
            return try await client.send(Request<String>("slow"))
        }
        try await Task.sleep(milliseconds: 50)
        let cancelledAt = Date()
        task.cancel()
        guard case .failure(let error as TernError) = await task.result else { Issue.record("expected cancellation"); return }
        #expect(error.isCancelled)
        // Timed where the task ends: the test itself may resume late on a loaded machine.
        let took = try #require(endedAt.withLock { $0 }).timeIntervalSince(cancelledAt)
        #expect(took < 10, "the 30 s delay must not be waited out (took \(took) s)")
    }

    @Test func receivedRequestsAreRecordedForAssertions() async throws {
        stubs.stub(.post("/v1/favourites"), .status(201))
        stubs.stub(.get("/v1/favourites"), .json([String]()))
        _ = try await client.send(Request<Data>("favourites", method: .post, body: .form(["city": "上海"])))
        _ = try await client.send(Request<JSON>("favourites"))
        _ = await result(Request<JSON>("unstubbed"))
        #expect(stubs.receivedRequests.map { $0.url?.path } == ["/v1/favourites", "/v1/favourites", "/v1/unstubbed"])
        let posted = try #require(stubs.received(.post("/v1/favourites")).first?.httpBody)
        #expect(String(decoding: posted, as: UTF8.self) == "city=%E4%B8%8A%E6%B5%B7")
        stubs.reset()
        #expect(stubs.receivedRequests.isEmpty)
    }

    @Test func handlersBuildAnswersFromTheRequest() async throws {
        stubs.stub(.get("/v1/search")) { request in
            let query = URLComponents(url: request.url!, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "q" }?.value
            return .json(["echo": query ?? ""])
        }
        #expect(try await client.send(Request<JSON>("search", query: ["q": "北京 & co"])).json["echo"]?.string == "北京 & co")
    }

    @Test func laterStubsWinOverEarlierOnes() async throws {
        stubs.stub(.everything, .string("default"))
        stubs.stub(.get("/v1/special"), .string("special"))
        #expect(try await client.send(Request<String>("special")).value == "special")
        #expect(try await client.send(Request<String>("anything")).value == "default")
    }

    @Test func registriesArePerTransportSoTestsRunInParallel() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask { () async throws -> Void in
                    let stubs = StubTransport()
                    stubs.stub(.get("/v1/whoami"), .string("registry \(index)"))
                    let client = Client(baseURL: "https://api.test/v1") {
                        $0.transport = stubs; $0.callbackQueue = .immediate
                    }
                    for _ in 0..<10 {
                        let answer = try await client.send(Request<String>("whoami")).value
                        #expect(answer == "registry \(index)")
                    }
                    #expect(stubs.receivedRequests.count == 10)
                }
            }
            try await group.waitForAll()
        }
    }
}

extension Result {
    /// The error, for a failure.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
