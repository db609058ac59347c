import Foundation
import Testing
@testable import Tern

#if os(Linux)
/// A request sent directly from a caller's thread: that thread sends it and may read its head,
/// but the body is the loop thread's to read (libcurl reads up to a hundred buffers in one
/// `curl_multi_perform`, which would keep the caller inside `send` and grow the body in that
/// thread's malloc arena).
@Suite struct CurlDirectSendTests {
    /// While its events are held, the exchange refuses body bytes with libcurl's pause code and
    /// tells the loop to take them; once released, it takes them.
    @Test func bodyBytesWaitForTheLoopThread() throws {
        let curl = try LibCurl.loaded.get()
        let request = TransportRequest(URLRequest(url: try #require(URL(string: "http://127.0.0.1:1/"))))
        let exchange = CurlExchange(id: 1, request: request, settings: CurlSettings(TransportSettings(), curl: curl)) { _ in }
        let bytes: [UInt8] = Array("body".utf8)
        exchange.holdEvents()
        #expect(bytes.withUnsafeBufferPointer { exchange.write($0) } == LibCurl.writePause)
        #expect(exchange.stopHolding(), "the loop must resume the paused transfer")
        exchange.releaseEvents(curl: curl)
        #expect(bytes.withUnsafeBufferPointer { exchange.write($0) } == bytes.count)
        exchange.holdEvents()
        #expect(!exchange.stopHolding(), "nothing kept, nothing paused: nothing for the loop")
    }

    /// A compressed body is taken on the caller's thread, under its size limit: paused, libcurl
    /// would keep everything one read decodes to (up to 64 MB from a compression bomb).
    @Test func aDecodedBodyIsTakenUnderItsLimit() throws {
        let curl = try LibCurl.loaded.get()
        let url = try #require(URL(string: "http://127.0.0.1:1/"))
        let request = TransportRequest(URLRequest(url: url), destination: .memory(limit: 6))
        let exchange = CurlExchange(id: 1, request: request, settings: CurlSettings(TransportSettings(), curl: curl)) { _ in }
        exchange.holdEvents()
        for line in ["HTTP/1.1 200 OK\r\n", "Content-Encoding: gzip\r\n", "\r\n"] {
            #expect(Array(line.utf8).withUnsafeBufferPointer { exchange.header($0) })
        }
        let bytes: [UInt8] = Array("body".utf8)
        #expect(bytes.withUnsafeBufferPointer { exchange.write($0) } == bytes.count)
        #expect(bytes.withUnsafeBufferPointer { exchange.write($0) } == 0, "8 bytes against a limit of 6")
    }

    /// Sequential downloads of a 2 MB body through a client whose requests go out directly: every
    /// body arrives whole and in order, whatever part of it reached the socket during the send.
    @Test func directlySentRequestsGetTheirWholeBody() async throws {
        let transport = try #require(CurlTransport.make(settings: TransportSettings(), startsDirectly: true))
        let client = Client(baseURL: try TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.transport = transport
        }
        let count = 2 << 20
        var pattern = [UInt8](repeating: 0, count: count)
        for index in 0..<count { pattern[index] = UInt8((index * 31 + 7) % 251) }
        let expected = Data(pattern)
        for _ in 0..<5 {
            let body = try await client.send(Request<Data>("pattern", query: ["n": count])).value
            // Compared outside #expect, whose diff of two large values would take minutes.
            let whole = body == expected
            #expect(whole, "\(body.count) bytes, not the \(count) of the pattern")
        }
    }
}
#endif
