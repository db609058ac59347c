import Foundation
import Testing
@testable import Tern

/// Proxies over both transports, through a loopback forward proxy (`scripts/fixture_proxy.py`)
/// that marks what it relays with `Via: 1.1 tern-fixture-proxy` — on the request the fixture's
/// `/echo` sees, and on the response.
@Suite struct ProxyTests {
    private static let mark = "tern-fixture-proxy"

    /// The transports that honour an explicit proxy here: URLSession on Linux does not (see below).
    static var explicitKinds: [TransportKind] { TransportKind.all.filter { $0 == .curl || !isLinux } }
    static var isLinux: Bool {
        #if os(Linux)
        true
        #else
        false
        #endif
    }

    @Test(arguments: explicitKinds)
    func anExplicitProxyCarriesTheRequestsExceptToExcludedHosts(over transport: TransportKind) async throws {
        let proxyPort = try TestServers.proxyPort()
        let proxied = Client(baseURL: try TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.transportSettings.proxy = .http(host: "127.0.0.1", port: proxyPort)
            transport.configure(&$0)
        }
        let echoed = try await proxied.send(Request<JSON>("echo", method: .post, body: .json(["city": "Beijing"])))
        #expect(echoed.header("Via")?.contains(Self.mark) == true)
        #expect(echoed.json["headers"]?["Via"]?.string?.contains(Self.mark) == true)
        #expect(echoed.json["body"]?.string?.contains("Beijing") == true)

        let excluded = Client(baseURL: try TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.transportSettings.proxy = .http(host: "127.0.0.1", port: proxyPort, excluding: ["127.0.0.1"])
            transport.configure(&$0)
        }
        let direct = try await excluded.send(Request<JSON>("echo"))
        #expect(direct.header("Via") == nil)
        #expect(direct.json["headers"]?["Via"] == nil)
    }

    #if os(macOS) || os(Linux)  // a child process of its own
    @Test(arguments: explicitKinds)
    func theEnvironmentsProxyIsUsedUnlessTheClientSaysDirect(over transport: TransportKind) async throws {
        let proxy = "http://127.0.0.1:\(try TestServers.proxyPort())"
        let url = try TestServers.fixture() + "/echo"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tern-proxy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        // A process of its own: the environment is process-wide.
        var environment = ["http_proxy": proxy, "no_proxy": ""]
        environment["TERN_TRANSPORT"] = transport == .curl ? "curl" : "urlsession"
        for direct in [false, true] {
            let file = folder.appendingPathComponent(direct ? "direct.json" : "proxied.json")
            let run = try await Transfers.runToolCapturing(
                ["download", url, file.path] + (direct ? ["--direct"] : []),
                environment: environment, seconds: 60)
            #expect(run.status == 0, "\(run.errors)")
            let body = try String(contentsOf: file, encoding: .utf8)
            #expect(body.contains(Self.mark) != direct, "direct: \(direct), body: \(body)")
        }
    }
    #endif

    #if os(Linux)
    @Test func urlSessionOnLinuxFollowsTheEnvironmentAndRefusesAnythingElseAtCreation() async throws {
        let proxy = "http://127.0.0.1:\(try TestServers.proxyPort())"
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tern-proxy-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("proxied.json")
        let run = try await Transfers.runToolCapturing(
            ["download", try TestServers.fixture() + "/echo", file.path],
            environment: ["http_proxy": proxy, "TERN_TRANSPORT": "urlsession"], seconds: 60)
        #expect(run.status == 0, "\(run.errors)")
        #expect(try String(contentsOf: file, encoding: .utf8).contains(Self.mark))
        for setting in [ProxyConfiguration.direct, .http(host: "127.0.0.1", port: 9)] {
            let client = Client(baseURL: try TestServers.fixture()) {
                $0.transportSettings.proxy = setting
                $0.transport = URLSessionTransport(configuration: $0.makeSessionConfiguration())
            }
            guard case .unsupportedConfiguration(let reason)? = client.configurationError else {
                Issue.record("\(setting): no configuration error")
                continue
            }
            #expect(reason.contains("libcurl"))
            await #expect(throws: TernError.self) { try await client.send(Request<JSON>("echo")) }
        }
    }
    #endif
}
