import Foundation
import Testing
@testable import Tern

#if os(Linux)
/// HTTP/2 over TLS against nginx (`scripts/nginx-h2.conf.template`): the libcurl transport
/// negotiates it by ALPN and multiplexes concurrent requests over the connection it has, which
/// nginx's own connection counter (`stub_status`) confirms.
@Suite struct HTTP2Tests {
    /// nginx's count of accepted connections so far.
    private func acceptedConnections(_ client: Client) async throws -> Int {
        let status = try await client.send(Request<String>("status"))
        // "Active connections: 1 \n server accepts handled requests\n 12 12 40 \n…"
        let lines = status.value.split(separator: "\n")
        let counts = try #require(lines.firstIndex { $0.contains("accepts") }.map { lines[$0 + 1].split(separator: " ") })
        return try #require(Int(counts[0]))
    }

    /// A client of nginx on the libcurl transport, trusting the test authority, then `configure`.
    private func h2Client(_ configure: (inout ClientConfiguration) -> Void = { _ in }) throws -> Client {
        let transport = try #require(
            CurlTransport.make(
                configuration: {
                    var configuration = ClientConfiguration()
                    configuration.transportSettings.tls.certificateAuthorityFile = try TestServers.tlsFile("ca.pem")
                    return configuration
                }()))
        return Client(baseURL: try TestServers.h2()) {
            $0.callbackQueue = .immediate
            $0.transport = transport
            configure(&$0)
        }
    }

    @Test(arguments: [nil, Int64(4_000_000)])
    func aProducedBodyGoesInDataFramesByteForByte(length: Int64?) async throws {
        let client = try h2Client { $0.timeout = 30 }
        let name = "uploads/\(UUID().uuidString).bin"
        let put = try await client.send(
            Request<Data>(name, method: .put, body: .stream(StreamedBodyTests.pieces(4_000_000), length: length)))
        #expect(put.statusCode == 201)
        #expect(put.metrics?.httpVersion == "HTTP/2")
        let stored = try await client.send(Request<Data>(name)).value
        #expect(stored.count == 4_000_000)
        #expect(UploadTests.sha256(stored) == UploadTests.sha256(TestPattern.bytes(4_000_000)))
    }

    @Test func concurrentRequestsShareOneMultiplexedConnection() async throws {
        let client = try h2Client()
        let first = try await client.send(Request<JSON>("tiny.json"))
        #expect(first.metrics?.httpVersion == "HTTP/2")
        let before = try await acceptedConnections(client)
        let versions = try await withThrowingTaskGroup(of: (String?, Bool?).self) { group in
            for _ in 0..<100 {
                group.addTask {
                    let response = try await client.send(Request<JSON>("tiny.json"))
                    #expect(response.json["h2"]?.bool == true)
                    return (response.metrics?.httpVersion, response.metrics?.reusedConnection)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(versions.count == 100)
        #expect(versions.allSatisfy { $0.0 == "HTTP/2" })
        #expect(versions.allSatisfy { $0.1 == true }, "every request on the connection that was already open")
        #expect(try await acceptedConnections(client) == before, "no new connection for 100 concurrent requests")
    }
}
#endif
