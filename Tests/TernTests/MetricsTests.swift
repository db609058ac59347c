import Foundation
import Testing
@testable import Tern

/// Every network response carries `Metrics`: measured by the libcurl transport, filled from
/// Tern's own clock over URLSession; none for an answer from the cache alone.
@Suite struct MetricsTests {
    private func client(_ transport: TransportKind, base: String) -> Client {
        Client(baseURL: base) {
            $0.callbackQueue = .immediate
            transport.configure(&$0)
        }
    }

    @Test(arguments: TransportKind.all)
    func aResponseSaysHowItsExchangeWent(over transport: TransportKind) async throws {
        let client = client(transport, base: try TestServers.fixture())
        let first = try await client.send(Request<Data>("pattern", query: ["n": "4096"]))
        let second = try await client.send(Request<Data>("pattern", query: ["n": "4096"]))
        for response in [first, second] {
            let metrics = try #require(response.metrics)
            #expect(metrics.bytesReceived == 4096)
            #expect(metrics.bytesSent == 0)
            #expect(metrics.firstByte >= 0 && metrics.firstByte <= metrics.total)
            #expect(metrics.total <= response.timing.duration)
            #expect(metrics.redirectTime == 0)
        }
        let measured = try #require(second.metrics)
        switch transport {
        case .curl:
            #expect(measured.measuredBy == .transport)
            #expect(measured.httpVersion == "HTTP/1.1" || measured.httpVersion == "HTTP/1.0")
            #expect(first.metrics?.reusedConnection == false)
            #expect(measured.reusedConnection == true)
            let lookup = try #require(measured.nameLookup), connect = try #require(measured.connect)
            #expect(lookup <= connect && connect <= measured.firstByte)
            #expect(measured.secureConnect == nil)
        case .urlSession:
            #expect(measured.measuredBy == .tern)
            #expect(measured.nameLookup == nil && measured.connect == nil && measured.reusedConnection == nil)
            #expect(measured.httpVersion == nil)
        }
    }

    @Test(arguments: TransportKind.all)
    func firstByteAndTotalFollowTheServersPace(over transport: TransportKind) async throws {
        let client = client(transport, base: try TestServers.fixture())
        // Five chunks 0.3 s apart, the first with the head: the end comes 1.2 s after the first
        // byte, whenever a loaded machine sees that first byte (late by up to 0.6 s here, 0.9 s
        // in a parallel pass under ThreadSanitizer).
        let started = Date()
        let response = try await client.send(Request<Data>("drip", query: ["chunks": "5", "interval": "0.3"]))
        let elapsed = Date().timeIntervalSince(started)
        let metrics = try #require(response.metrics)
        #expect(metrics.total - metrics.firstByte > (LimitTests.isUnderThreadSanitizer ? 0.2 : 0.6))
        // The whole exchange: at least the server's pace, at most what the caller waited.
        #expect(metrics.total > 1.1 && metrics.total <= elapsed + 0.01, "total \(metrics.total) s, waited \(elapsed) s")
        #expect(metrics.bytesReceived == Int64(response.data.count))
    }

    @Test(arguments: TransportKind.all)
    func anUploadCountsItsBodyAndRedirectsTheirTime(over transport: TransportKind) async throws {
        let client = client(transport, base: try TestServers.httpbin())
        let body = Data(repeating: 0x61, count: 1500)
        let posted = try await client.send(Request<JSON>("post", method: .post, body: .data(body, contentType: "text/plain")))
        #expect(posted.metrics?.bytesSent == 1500)
        let redirected = try await client.send(Request<JSON>("redirect/2"))
        #expect(redirected.redirects.count == 2)
        let metrics = try #require(redirected.metrics)
        #expect(metrics.redirectTime > 0)
        #expect(metrics.redirectTime < redirected.timing.duration)
    }

    @Test func aCacheHitHasNoMetrics() async throws {
        let base = try TestServers.httpbin()
        let client = Client(baseURL: base) {
            $0.callbackQueue = .immediate
            $0.cachePolicy = CachePolicy(read: .cacheElseNetwork, write: .memory, maxAge: 60)
            $0.cacheStorage.directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-metrics-\(UUID().uuidString)")
        }
        let request = Request<Data>("bytes/64")
        let network = try await client.send(request)
        #expect(network.metrics != nil)
        let cached = try await client.send(request)
        #expect(cached.source == .cache)
        #expect(cached.metrics == nil)
    }
}
