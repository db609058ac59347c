import Foundation
import Testing
@testable import Tern

/// DNS control on the libcurl transport: names that no DNS knows reach the loopback httpbin
/// through `HostOverrides`, keeping their name in `Host`; URLSession refuses the setting.
@Suite struct HostOverrideTests {
    private func httpbinPort() throws -> Int {
        try #require(URL(string: try TestServers.httpbin())?.port)
    }

    #if os(Linux)
    @Test func aResolvedNameReachesItsAddressAndKeepsItsName() async throws {
        let port = try httpbinPort()
        let client = TransportKind.curl.client("http://api.tern.test:\(port)") {
            $0.transportSettings.hostOverrides.resolve("API.tern.test", to: "127.0.0.1")
        }
        let headers = try await client.send(Request<JSON>("headers")).value["headers"]
        #expect(headers?["Host"]?.string == "api.tern.test:\(port)")
    }

    @Test func aConnectToRuleSendsAHostAndPortElsewhere() async throws {
        let port = try httpbinPort()
        let client = TransportKind.curl.client("http://service.tern.test") {
            $0.transportSettings.hostOverrides.connect("service.tern.test", port: 80, to: "127.0.0.1", port: port)
            // Another port of that name is not covered by the rule: it would need DNS.
            $0.transportSettings.hostOverrides.connect("other.tern.test", port: 81, to: "::1", port: port)
        }
        let headers = try await client.send(Request<JSON>("headers")).value["headers"]
        #expect(headers?["Host"]?.string == "service.tern.test")
        #expect(
            HostOverrides.Rule(host: "other.tern.test", port: 81, targetHost: "::1", targetPort: port)
                == client.configuration.transportSettings.hostOverrides.rules.last)
        #expect(
            client.configuration.transportSettings.hostOverrides.curlLines == [
                "service.tern.test:80:127.0.0.1:\(port)", "other.tern.test:81:[::1]:\(port)",
            ])
    }
    #endif

    @Test func urlSessionRefusesOverridesAndBadRulesAreRefusedEverywhere() async throws {
        let onURLSession = TransportKind.urlSession.client("http://api.tern.test") {
            $0.transportSettings.hostOverrides.resolve("api.tern.test", to: "127.0.0.1")
        }
        let result = await onURLSession.completionResult(Request<JSON>("headers")).0
        guard case .unsupportedConfiguration(let reason)? = result.failure else {
            Issue.record("expected an unsupported configuration, got \(result)")
            return
        }
        #expect(reason.contains("hostOverrides need the libcurl transport"))
        for kind in TransportKind.all {
            let bad = kind.client("http://127.0.0.1:1") { $0.transportSettings.hostOverrides.connect("a b", port: 70_000, to: "127.0.0.1") }
            #expect(bad.configurationError?.description.contains("hostOverrides") == true, "\(String(describing: bad.configurationError))")
        }
    }
}
