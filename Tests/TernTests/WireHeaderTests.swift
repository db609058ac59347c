import Foundation
import Testing
import TernStubs

@testable import Tern

/// Every request carries the client's wire headers (`User-Agent`, `Accept-Encoding`,
/// `Accept-Language`) whatever its transport: the built-in ones send them themselves, and for a
/// stub, a custom transport or a URLSession of your own configuration the client adds them.
@Suite struct WireHeaderTests {
    @Test func aStubTransportSeesTheHeadersTheWireWouldCarry() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/v1/city"), .json(["name": "Beijing"]))
        let client = Client(baseURL: "https://api.example.test/v1") {
            $0.transport = stubs
            $0.callbackQueue = .immediate
            $0.transportSettings.acceptLanguage = "zh-CN, en;q=0.8"
        }
        _ = try await client.send(Request<JSON>("city"))
        var own = Request<JSON>("city", headers: ["User-Agent": "Weather/2.1"])
        own.headers["Accept-Encoding"] = "identity"
        _ = try await client.send(own)
        let sent = stubs.received(.get("/v1/city"))
        #expect(sent.count == 2)
        #expect(sent.first?.value(forHTTPHeaderField: "User-Agent") == "Tern/\(Client.version)")
        #expect(sent.first?.value(forHTTPHeaderField: "Accept-Language") == "zh-CN, en;q=0.8")
        #expect(sent.first?.value(forHTTPHeaderField: "Accept-Encoding") == "gzip, deflate, br")
        // A request's own headers win.
        #expect(sent.last?.value(forHTTPHeaderField: "User-Agent") == "Weather/2.1")
        #expect(sent.last?.value(forHTTPHeaderField: "Accept-Encoding") == "identity")
    }

    /// Without an `Accept-Language` the libcurl transport sends none; URLSession on Linux
    /// (FoundationNetworking) adds its own `en` to a request without one, as documented.
    @Test func noAcceptLanguageSendsNone() async throws {
        let client = Client(baseURL: try TestServers.httpbin()) {
            $0.callbackQueue = .immediate
            $0.transportSettings.acceptLanguage = nil
        }
        let headers = try await client.send(Request<JSON>("headers")).json["headers"]
        let onURLSession = ProcessInfo.processInfo.environment["TERN_TRANSPORT"] == "urlsession"
        #expect(headers?["Accept-Language"]?.string == (onURLSession ? "en" : nil), "\(String(describing: headers))")
        var own = Request<JSON>("headers")
        own.headers["Accept-Language"] = "fr"
        #expect(try await client.send(own).json["headers"]?["Accept-Language"]?.string == "fr")
    }

    @Test func aURLSessionOfYourOwnConfigurationGetsThemFromTheClient() async throws {
        let client = Client(baseURL: try TestServers.httpbin()) {
            $0.callbackQueue = .immediate
            $0.transport = URLSessionTransport(configuration: .ephemeral)
        }
        let headers = try await client.send(Request<JSON>("headers")).json["headers"]
        #expect(headers?["User-Agent"]?.string == "Tern/\(Client.version)")
        #expect(URLSessionTransport(configuration: .ephemeral).sendsWireHeaders == false)
        #expect(URLSessionTransport.make(configuration: ClientConfiguration()).sendsWireHeaders)
    }
}

/// A method that defines a meaning for a body says how long an empty one is (RFC 9110 §8.6):
/// some front ends refuse a `POST` without `Content-Length` with 411.
@Suite struct EmptyBodyFramingTests {
    @Test(arguments: [HTTPMethod.post, .put, .patch])
    func aMethodWithoutABodySendsContentLengthZero(_ method: HTTPMethod) async throws {
        let client = Client(baseURL: try TestServers.httpbin()) { $0.callbackQueue = .immediate }
        let echo = try await client.send(Request<JSON>("anything", method: method)).json
        #expect(echo["method"]?.string == method.rawValue)
        #expect(echo["headers"]?["Content-Length"]?.string == "0")
        // No body, so no type for it either.
        #expect(echo["headers"]?["Content-Type"] == nil)
    }

    @Test func aGetWithoutABodySendsNoLength() async throws {
        let client = Client(baseURL: try TestServers.httpbin()) { $0.callbackQueue = .immediate }
        let echo = try await client.send(Request<JSON>("anything")).json
        #expect(echo["headers"]?["Content-Length"] == nil)
    }
}
