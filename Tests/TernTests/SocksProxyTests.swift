import Foundation
import Testing
@testable import Tern

/// A SOCKS5 proxy on the libcurl transport, through a loopback proxy (`scripts/fixture_socks.py`)
/// that resolves `*.tern.test` itself: a name no DNS knows is reached only through it, which
/// shows the proxy, not the device, resolved the name.
@Suite struct SocksProxyTests {
    private struct Stats: Decodable {
        let connections: Int
        let names: [String]
    }

    private func stats(_ port: Int) async throws -> Stats {
        try await Client(baseURL: "http://127.0.0.1:\(port)") { $0.callbackQueue = .immediate }
            .send(Request<Stats>("socks-stats")).value
    }

    #if os(Linux)
    @Test func aSocks5ProxyResolvesTheNameAndCarriesTheRequestExceptToExcludedHosts() async throws {
        let socks = try TestServers.socksPort()
        let httpbinPort = try #require(URL(string: try TestServers.httpbin())?.port)
        let name = "socks-\(UUID().uuidString.prefix(8).lowercased()).tern.test"
        let client = TransportKind.curl.client("http://\(name):\(httpbinPort)") {
            $0.transportSettings.proxy = .socks5(host: "127.0.0.1", port: socks, excluding: ["127.0.0.1"])
        }
        #expect(client.configuration.transportSettings.proxy.description == "socks5h://127.0.0.1:\(socks)")
        let headers = try await client.send(Request<JSON>("headers")).value["headers"]
        #expect(headers?["Host"]?.string == "\(name):\(httpbinPort)")
        let posted = try await client.send(Request<JSON>("post", method: .post, body: .json(["city": "成都"]))).value
        #expect(posted["json"]?["city"]?.string == "成都")
        #expect(try await stats(socks).names.filter { $0 == name }.count >= 1)
        // An excluded host goes direct: the proxy does not see it.
        let before = try await stats(socks).connections
        let direct = try await client.send(Request<JSON>("http://127.0.0.1:\(httpbinPort)/get"))
        #expect(direct.statusCode == 200)
        #expect(try await stats(socks).connections == before)
    }

    @Test func aNameTheProxyRefusesEndsWithATypedError() async throws {
        let socks = try TestServers.socksPort()
        let client = TransportKind.curl.client("http://refused.example.invalid:80") {
            $0.transportSettings.proxy = .socks5(host: "127.0.0.1", port: socks)
        }
        let result = await client.completionResult(Request<JSON>("get")).0
        let error = try #require(result.failure)
        guard case .transport = error else {
            Issue.record("expected a transport error, got \(error)")
            return
        }
    }
    #endif

    @Test func urlSessionOnLinuxRefusesASocksProxyAtCreation() {
        #if os(Linux)
        let client = TransportKind.urlSession.client("http://127.0.0.1:1") {
            $0.transportSettings.proxy = .socks5(host: "127.0.0.1", port: 1080)
        }
        #expect(client.configurationError != nil)
        #endif
    }
}
