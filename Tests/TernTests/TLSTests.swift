import Foundation
import Testing
@testable import Tern

/// Pinning and TLS options against the TLS fixture (`scripts/fixture_tls.py`: a trustme authority,
/// a leaf for 127.0.0.1, a client certificate, a second port capped at TLS 1.2). The transport
/// tests run on the libcurl transport, the one that implements them on Linux; URLSession on Linux
/// must refuse them loudly.
@Suite struct TLSTests {
    /// A client of the TLS fixture trusting its authority, with `adjust` applied to its TLS settings.
    private func client(
        _ base: String? = nil, retries: Int = 1,
        _ adjust: (inout TLSConfiguration) throws -> Void = { _ in }
    ) throws -> Client {
        var tls = TLSConfiguration(certificateAuthorityFile: try TestServers.tlsFile("ca.pem"))
        try adjust(&tls)
        let base = try base ?? TestServers.tls()
        return Client(baseURL: base) {
            $0.callbackQueue = .immediate
            $0.transportSettings.tls = tls
            $0.retryPolicy = retries > 1 ? .exponential(maxAttempts: retries, baseDelay: 0.01) : .none
            TransportKind.curl.configure(&$0)
        }
    }

    @Test func ternsPinOfACertificateIsTheOneOpenSSLComputes() throws {
        let leaf = try Data(contentsOf: TestServers.tlsFile("leaf.pem"))
        #expect(try PublicKeyPin(certificate: leaf) == TestServers.tlsPin("leaf"))
        let other = try Data(contentsOf: TestServers.tlsFile("other-leaf.pem"))
        #expect(try PublicKeyPin(certificate: other) == TestServers.tlsPin("other"))
        #expect(throws: CertificateError.self) { try PublicKeyPin(certificate: Data("not a certificate".utf8)) }
        #expect(PublicKeyPin("sha256//tooShort") == nil)
    }

    @Test func hostsAreLookedUpExactlyThenByWildcard() throws {
        let pin = try TestServers.tlsPin("leaf")
        let pinning = ServerPinning([
            "API.example.com": .publicKeys([pin]), "*.example.com": .publicKeys([], backups: [pin]),
            "open.example.com": .none,
        ])
        #expect(pinning.pins(for: "api.example.com") == .publicKeys([pin]))
        #expect(pinning.pins(for: "a.b.example.com") == .publicKeys([], backups: [pin]))
        #expect(pinning.pins(for: "open.example.com") == .none)
        #expect(pinning.pins(for: "example.com") == .none)
        #expect(pinning.pins(for: "other.org") == .none)
    }

    #if os(Linux)
    @Test func theFixturesAuthorityIsTrustedWhenConfiguredAndOnlyThen() async throws {
        let response = try await client().send(Request<JSON>("json", query: ["n": 2]))
        #expect(response.json["items"]?.array?.count == 2)
        let metrics = try #require(response.metrics)
        #expect(metrics.secureConnect != nil && metrics.secureConnect! >= metrics.connect!)
        let untrusting = try client { $0.certificateAuthorityFile = nil }
        let error = await #expect(throws: TernError.self) { try await untrusting.send(Request<JSON>("json")) }
        #expect(error?.underlyingError?.code == .serverCertificateUntrusted)
    }

    @Test func aMatchingPinABackupPinAndACertificatePinConnect() async throws {
        let leaf = try TestServers.tlsPin("leaf"), other = try TestServers.tlsPin("other")
        let pinnings: [ServerPinning.Pins] = [
            .publicKeys([leaf]),
            .publicKeys([other], backups: [leaf]),
            .certificates([try Data(contentsOf: TestServers.tlsFile("leaf.pem"))]),
        ]
        for pins in pinnings {
            let client = try client { $0.pinning = ServerPinning(["127.0.0.1": pins]) }
            let response = try await client.send(Request<JSON>("json"))
            #expect(response.statusCode == 200, "\(pins)")
        }
    }

    @Test func aWrongPinFailsAtOnceWithTheTypedErrorAndIsNotRetried() async throws {
        let other = try TestServers.tlsPin("other")
        let otherCertificate = try Data(contentsOf: TestServers.tlsFile("other-leaf.pem"))
        for pins in [ServerPinning.Pins.publicKeys([other]), .certificates([otherCertificate]), .certificates([Data("junk".utf8)])] {
            let client = try client(retries: 3) { $0.pinning = ServerPinning(["127.0.0.1": pins]) }
            let started = Date()
            let error = await #expect(throws: TernError.self) { try await client.send(Request<JSON>("json")) }
            guard case .pinningFailed(let host)? = error else {
                Issue.record("expected .pinningFailed, got \(String(describing: error))")
                continue
            }
            #expect(host == "127.0.0.1")
            #expect(Date().timeIntervalSince(started) < 20)  // one handshake, no retry (a loaded 2-core run: not 1 s)
            #expect(error?.description.contains("pins") == true)
        }
    }

    @Test func aHostWithoutPinsIsNotPinned() async throws {
        let client = try client { $0.pinning = ServerPinning(["elsewhere.example": .publicKeys([try TestServers.tlsPin("other")])]) }
        #expect(try await client.send(Request<JSON>("json")).statusCode == 200)
    }

    @Test func aClientCertificateIsPresentedWhenConfigured() async throws {
        let anonymous = try await client().send(Request<JSON>("client-cert"))
        #expect(anonymous.json["subject"] == .null)
        let mutual = try client {
            $0.clientCertificate = .init(
                certificate: try TestServers.tlsFile("client.pem"), privateKey: try TestServers.tlsFile("client.key"))
        }
        #expect(try await mutual.send(Request<JSON>("client-cert")).json["subject"]?.string == "tern-client.example")
    }

    @Test func theMinimumVersionRefusesAnOlderServer() async throws {
        let base = try TestServers.tls12()
        #expect(try await client(base) { $0.minimumVersion = .v1_2 }.send(Request<JSON>("json")).statusCode == 200)
        let strict = try client(base) { $0.minimumVersion = .v1_3 }
        let error = await #expect(throws: TernError.self) { try await strict.send(Request<JSON>("json")) }
        #expect(error?.underlyingError?.code == .secureConnectionFailed)
        #expect(try await client { $0.minimumVersion = .v1_3 }.send(Request<JSON>("json")).statusCode == 200)
    }

    @Test func urlSessionOnLinuxRefusesTLSSettingsAtCreationNotSilently() async throws {
        let pinned = ServerPinning(["127.0.0.1": .publicKeys([try TestServers.tlsPin("leaf")])])
        let client = Client(baseURL: try TestServers.tls()) {
            $0.callbackQueue = .immediate
            $0.transportSettings.tls.pinning = pinned
            $0.transport = URLSessionTransport(configuration: $0.makeSessionConfiguration())
        }
        guard case .unsupportedConfiguration(let reason)? = client.configurationError else {
            Issue.record("expected a configuration error, got \(String(describing: client.configurationError))")
            return
        }
        #expect(reason.contains("libcurl"))
        let error = await #expect(throws: TernError.self) { try await client.send(Request<JSON>("json")) }
        guard case .unsupportedConfiguration? = error else {
            Issue.record("got \(String(describing: error))")
            return
        }
        let result = await client.completionResult(Request<JSON>("json"))
        guard case .failure(.unsupportedConfiguration) = result.0 else {
            Issue.record("closure style got \(result.0)")
            return
        }
        // Without TLS settings URLSession is fine.
        let plain = Client(baseURL: try TestServers.fixture()) {
            $0.transport = URLSessionTransport(configuration: $0.makeSessionConfiguration())
        }
        #expect(plain.configurationError == nil)
    }
    #endif
}
