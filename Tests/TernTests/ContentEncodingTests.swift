import Foundation
import Testing

@testable import Tern

/// zstd responses: offered and decoded on libcurl where it was built with zstd (Debian's is), not
/// offered on URLSession (which does not decode it), and a zstd bomb ends at the size limit,
/// which counts decoded bytes.
@Suite struct ContentEncodingTests {
    @Test(arguments: TransportKind.all)
    func zstdIsOfferedAndDecodedWhereTheTransportCan(kind: TransportKind) async throws {
        let client = kind.client(try TestServers.fixture())
        let response = try await client.send(Request<JSON>("zstd"))
        #expect(response.value["encoded"]?.string == "zstd")
        #expect(response.value["text"]?.string == String(repeating: "雨 ", count: 2_000))
        #if os(Linux)
        let decodesZstd = kind == .curl && (try? LibCurl.loaded.get())?.decodesZstd == true
        #else
        let decodesZstd = false
        #endif
        #expect((response.header("Content-Encoding") == "zstd") == decodesZstd, "\(response.head)")
    }

    @Test func aZstdBombEndsAtTheSizeLimit() async throws {
        #if os(Linux)
        guard (try? LibCurl.loaded.get())?.decodesZstd == true else { return }
        let client = TransportKind.curl.client(try TestServers.fixture()) { $0.maximumResponseSize = 5 << 20 }
        let result = await client.completionResult(Request<Data>("zstd-bomb", query: ["mb": 256])).0
        #expect(result.failure == .responseTooLarge(limit: 5 << 20))
        #endif
    }
}

extension ContentEncodingTests {
    /// URLSession is not offered zstd (Tern offers what URLSession decodes on every platform), but
    /// on Linux FoundationNetworking's libcurl decodes a zstd body a server sends anyway.
    @Test func urlSessionOnLinuxDecodesZstdItWasNotOffered() async throws {
        #if os(Linux)
        guard (try? LibCurl.loaded.get())?.decodesZstd == true else { return }
        let client = TransportKind.urlSession.client(try TestServers.fixture())
        let response = try await client.send(Request<Data>("zstd-bomb", query: ["mb": 1]))
        #expect(response.data == Data(count: 1 << 20))
        #endif
    }
}
