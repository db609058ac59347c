import Foundation
import Testing
import TernStubs
@testable import Tern

/// Redirects are followed by Tern, as attempts of their own, the same on every platform: the
/// method and body rules, credentials kept to their origin, the limit, loops and downgrades,
/// checked at the fixture server (which records what it received) and at httpbin.
@Suite struct RedirectTests {
    private func client(_ configure: (inout ClientConfiguration) -> Void = { _ in }) throws -> Client {
        try Client(baseURL: TestServers.fixture()) {
            $0.callbackQueue = .immediate
            configure(&$0)
        }
    }

    /// A request for `/redirect?status=S&to=…`.
    private func redirect(
        _ status: Int, to target: String, method: HTTPMethod = .get, body: RequestBody? = nil,
        headers: [String: String] = [:]
    ) -> Request<JSON> {
        Request<JSON>("redirect", method: method, query: ["status": status, "to": target], body: body, headers: headers)
    }

    @Test(arguments: [307, 308])
    func temporaryAndPermanentRedirectsResendTheMethodAndTheBody(status: Int) async throws {
        let client = try client()
        let request = redirect(status, to: "/echo", method: .post, body: .json(["city": "北京", "days": 3]))
        let response = try await client.send(request)
        #expect(response.json["method"]?.string == "POST")
        let echoed = try JSON(data: Data((response.json["body"]?.string ?? "").utf8))
        #expect(echoed["city"]?.string == "北京")
        #expect(echoed["days"]?.int == 3)
        #expect(response.redirects.map(\.statusCode) == [status])
        #expect(response.attempt == 2)
    }

    @Test(arguments: [(303, "PUT"), (303, "POST"), (302, "POST"), (301, "POST")])
    func seeOtherAndOlderRedirectsOfAPostBecomeABodilessGet(status: Int, method: String) async throws {
        let client = try client()
        let request = redirect(status, to: "/echo", method: HTTPMethod(rawValue: method), body: .json(["a": 1]))
        let response = try await client.send(request)
        #expect(response.json["method"]?.string == "GET")
        #expect(response.json["body"]?.string == "")
        #expect(response.json["headers"]?["Content-Type"] == nil)
    }

    @Test func credentialsStayWithTheirOriginAndCrossOnlyWithinIt() async throws {
        let fixture = try TestServers.fixture()
        let otherOrigin = fixture.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/echo"
        let client = try client { $0.redirectPolicy.sensitiveHeaders = ["X-Api-Key"] }
        let headers = ["Authorization": "Bearer secret", "Cookie": "session=1", "X-Api-Key": "k", "X-Trace": "t"]

        let crossed = try await client.send(redirect(302, to: otherOrigin, headers: headers))
        let received = crossed.json["headers"]
        #expect(crossed.redirects.first?.to.host == "localhost")
        #expect(received?["Authorization"] == nil)
        #expect(received?["Cookie"] == nil)
        #expect(received?["X-Api-Key"] == nil)
        #expect(received?["X-Trace"]?.string == "t")

        let sameOrigin = try await client.send(redirect(302, to: "/echo", headers: headers))
        #expect(sameOrigin.json["headers"]?["Authorization"]?.string == "Bearer secret")
        #expect(sameOrigin.json["headers"]?["Cookie"]?.string == "session=1")
    }

    /// Another port is another origin (RFC 6454), even on the same host: httpbin listens on
    /// 127.0.0.1 like the fixture, on a port of its own.
    @Test func credentialsStayBehindWhenOnlyThePortChanges() async throws {
        let fixturePort = URL(string: try TestServers.fixture())?.port
        let otherPort = try TestServers.httpbin() + "/headers"
        let crossed = try await client().send(
            redirect(302, to: otherPort, headers: ["Authorization": "Bearer secret", "Cookie": "session=1"]))
        #expect(crossed.redirects.first?.to.host == "127.0.0.1")
        #expect(crossed.redirects.first?.to.port != fixturePort)
        #expect(crossed.json["headers"]?["Authorization"] == nil)
        #expect(crossed.json["headers"]?["Cookie"] == nil)
    }

    /// A port written out that is the scheme's default is the same origin as none written
    /// (RFC 6454): `http://h/` and `http://h:80/` keep credentials, `http://h:443/` does not.
    /// Tern follows redirects above the transport, so a stub transport sees every hop's headers.
    @Test(arguments: [
        ("http://api.test/v1", "http://api.test:80/next", true), ("https://api.test/v1", "https://api.test:443/next", true),
        ("http://api.test:80/v1", "http://api.test/next", true), ("http://api.test/v1", "http://api.test:443/next", false),
        ("https://api.test/v1", "https://api.test:80/next", false),
    ])
    func aDefaultPortWrittenOutIsTheSameOrigin(_ hop: (base: String, target: String, keeps: Bool)) async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/v1/login"), .redirect(to: hop.target))
        stubs.stub(.get("/next"), .json(["ok": true]))
        let client = Client(baseURL: hop.base) {
            $0.transport = stubs
            $0.callbackQueue = .immediate
        }
        let response = try await client.send(Request<JSON>("login", headers: ["Authorization": "Bearer secret"]))
        #expect(response.redirects.count == 1)
        let next = try #require(stubs.received(.get("/next")).first)
        #expect((next.value(forHTTPHeaderField: "Authorization") != nil) == hop.keeps, "\(hop)")
        #expect(RedirectStage.sameOrigin(try #require(URL(string: hop.base)), try #require(URL(string: hop.target))) == hop.keeps)
    }

    @Test func aLoopEndsWithTheTypedErrorAfterTheLimitCountedAtTheServer() async throws {
        let key = Fixture.uniqueKey("loop")
        let client = try client { $0.redirectPolicy.limit = 4 }
        let (result, seconds) = await client.timedResult(Request<JSON>("redirect-loop", query: ["key": key]))
        guard case .failure(.redirectFailed(.tooMany(let limit, let url))) = result else {
            Issue.record("expected too many redirects, got \(result)")
            return
        }
        #expect(limit == 4)
        #expect(url.path == "/redirect-loop")
        #expect(seconds < 30, "ends long before the 60 s deadline")
        #expect(try await Fixture.count(key) == 5, "the first request and 4 followed redirects")
    }

    @Test func theDefaultLimitIsTenAndAChainWithinItArrives() async throws {
        let key = Fixture.uniqueKey("chain")
        let client = try client()
        let response = try await client.send(Request<JSON>("redirect-chain", query: ["n": 10, "key": key]))
        #expect(response.json["key"]?.string == key)
        #expect(response.redirects.count == 10)
        #expect(response.attempt == 11)
        let tooLong = await client.completionResult(Request<JSON>("redirect-chain", query: ["n": 11, "key": key + "-11"]))
        #expect(
            tooLong.0.failure
                == .redirectFailed(
                    .tooMany(
                        limit: 10,
                        url: URL(
                            string: try TestServers.fixture()
                                + "/redirect-chain?n=1&key=\(key)-11")!)))
    }

    @Test func aRequestThatDoesNotFollowGetsTheRedirectItself() async throws {
        var request = redirect(302, to: "/echo")
        request.redirectPolicy = .never
        let result = try await client().completionResult(request).0
        #expect(result.failure?.statusCode == 302)
        #expect(result.failure?.responseHeader("location") == "/echo")
    }

    @Test(arguments: ["redirect/3", "absolute-redirect/3", "relative-redirect/3"])
    func httpbinRedirectsAreFollowedToTheirEnd(path: String) async throws {
        let client = Client(baseURL: try TestServers.httpbin()) { $0.callbackQueue = .immediate }
        let response = try await client.send(Request<JSON>(path))
        #expect(response.redirects.count == 3)
        #expect(response.url?.path == "/get")
        #expect(response.json["url"]?.string?.hasSuffix("/get") == true)
    }

    @Test(arguments: [307, 308])
    func httpbinReceivesAPostedJSONBodyIntactAfterARedirect(status: Int) async throws {
        let client = Client(baseURL: try TestServers.httpbin()) { $0.callbackQueue = .immediate }
        let request = Request<JSON>(
            "redirect-to", method: .post, query: ["url": "/post", "status_code": status],
            body: .json(["q": "上海 & more", "n": 7]))
        let response = try await client.send(request)
        #expect(response.json["json"]?["q"]?.string == "上海 & more")
        #expect(response.json["json"]?["n"]?.int == 7)
        #expect(response.redirects.count == 1)
    }

    @Test func anHTTPSRedirectToHTTPIsRefusedUnlessAllowed() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/start"), .redirect(to: "http://api.test/plain"))
        stubs.stub(.get("/plain"), .json(["ok": true]))
        let client = Client(baseURL: "https://api.test") {
            $0.transport = stubs
            $0.callbackQueue = .immediate
        }
        let refused = await client.completionResult(Request<JSON>("start")).0
        #expect(
            refused.failure
                == .redirectFailed(
                    .insecureDowngrade(
                        from: URL(string: "https://api.test/start")!,
                        to: URL(string: "http://api.test/plain")!)))
        #expect(stubs.received(.get("/plain")).isEmpty)

        var allowed = Request<JSON>("start")
        allowed.redirectPolicy = RedirectPolicy(allowsInsecureDowngrade: true)
        #expect(try await client.send(allowed).json["ok"]?.bool == true)
    }

    @Test func aLocationThatIsNotHTTPFailsWithTheTypedError() async throws {
        let result = try await client().completionResult(redirect(302, to: "ftp://127.0.0.1/file")).0
        guard case .failure(.redirectFailed(.invalidLocation(let location, _))) = result else {
            Issue.record("expected an invalid location, got \(result)")
            return
        }
        #expect(location == "ftp://127.0.0.1/file")
    }
}
