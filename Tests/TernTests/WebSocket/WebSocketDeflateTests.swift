import Foundation
import Testing

@testable import Tern

/// permessage-deflate (RFC 7692) against the `websockets` package — with context takeover, and
/// without it and with the smallest windows — and against the hostile fixture: a deflate bomb, data
/// that does not inflate, RSV1 where it may not be, a parameter outside its range.
@Suite struct WebSocketDeflateTests {
    static let deflate = WebSocketOptions(compression: .permessageDeflate)

    static func client(_ address: String) -> Client {
        Client(baseURL: address.replacingOccurrences(of: "ws://", with: "http://"))
    }

    /// What the server agreed to, then `count` messages of each kind echoed byte for byte.
    static func echo(_ address: String, count: Int = 20) async throws -> String? {
        let socket = client(address).webSocket(Request<Data>("extensions"), options: deflate)
        defer { socket.cancel() }
        return try await WebSocketTests.within(20) { () async throws -> String? in
            var iterator = socket.messages.makeAsyncIterator()
            guard case .text(let agreed)? = try await iterator.next() else { return nil }
            for index in 0..<count {
                // JSON-like text that compresses well, and binary that does not.
                let text = String(repeating: #"{"city": "北京", "temperature": \#(index), "sky": "晴"}, "#, count: 20)
                try await socket.send(text)
                #expect(try await iterator.next() == .text(text))
                let data = Data((0..<(1 + index * 700)).map { _ in UInt8.random(in: 0...255) })
                try await socket.send(data)
                #expect(try await iterator.next() == .data(data))
            }
            try await socket.send("")
            #expect(try await iterator.next() == .text(""))
            return agreed
        }
    }

    @Test func messagesEchoCompressedWithContextTakeover() async throws {
        let agreed = try await Self.echo(TestServers.webSocket())
        #expect(agreed?.hasPrefix("permessage-deflate") == true, "\(String(describing: agreed))")
        #expect(agreed?.contains("no_context_takeover") == false)
    }

    @Test func messagesEchoCompressedWithoutContextTakeoverAndSmallWindows() async throws {
        let agreed = try await Self.echo(TestServers.webSocketNoTakeover())
        for parameter in [
            "server_no_context_takeover", "client_no_context_takeover", "server_max_window_bits=9", "client_max_window_bits=8",
        ] {
            #expect(agreed?.contains(parameter) == true, "\(String(describing: agreed)) lacks \(parameter)")
        }
    }

    @Test func nothingIsOfferedByDefault() async throws {
        let socket = Self.client(try TestServers.webSocket()).webSocket(Request<Data>("extensions"))
        defer { socket.cancel() }
        let first = try await WebSocketTests.within { () async throws -> WebSocketMessage? in
            var iterator = socket.messages.makeAsyncIterator()
            return try await iterator.next()
        }
        #expect(first == .text(""))
    }

    @Test func aCompressedMessageFromTheServerInflatesBesideAPlainOne() async throws {
        let socket = Self.client(try TestServers.webSocketFixture()).webSocket(Request<Data>("deflatehello"), options: Self.deflate)
        defer { socket.cancel() }
        let messages = try await WebSocketTests.within { () async throws -> [WebSocketMessage?] in
            var iterator = socket.messages.makeAsyncIterator()
            return [try await iterator.next(), try await iterator.next()]
        }
        #expect(messages == [.text("hello"), .text("plain")])
    }

    /// 1 GiB of zeros in about 1 MB: the socket closes with 1009 at the 16 MiB limit, and memory
    /// grows by no more than a little past the limit.
    @Test func aDeflateBombEndsWith1009AndMemoryStaysFlat() async throws {
        let before = LimitTests.residentMegabytes()
        let socket = Self.client(try TestServers.webSocketFixture()).webSocket(Request<Data>("deflatebomb"), options: Self.deflate)
        let ending = try await WebSocketTests.within(60) { await socket.ended() }
        guard case .failed(.webSocketFailed(.messageTooBig, _)) = ending else {
            Issue.record("ended as \(ending)")
            return
        }
        #expect(socket.sentCloseCode == .messageTooBig)
        let grown = LimitTests.residentMegabytes() - before
        print("deflate bomb (1 GiB of zeros, 16 MiB limit): resident memory +\(Int(grown)) MB")
        #expect(grown < 40, "resident memory grew by \(grown) MB")
    }

    @Test(arguments: [("deflategarbage", WebSocketCloseCode.invalidFramePayloadData), ("deflatecontinuation", .protocolError)])
    func aBrokenCompressedMessageClosesWithItsCode(_ path: String, _ code: WebSocketCloseCode) async throws {
        let socket = Self.client(try TestServers.webSocketFixture()).webSocket(Request<Data>(path), options: Self.deflate)
        let ending = try await WebSocketTests.within { await socket.ended() }
        guard case .failed(.webSocketFailed(let sent, let reason)) = ending else {
            Issue.record("\(path): ended as \(ending)")
            return
        }
        #expect(sent == code, "\(path): \(reason)")
    }

    @Test func aParameterOutsideItsRangeRefusesTheHandshake() async throws {
        let socket = Self.client(try TestServers.webSocketFixture()).webSocket(Request<Data>("deflatebadparam"), options: Self.deflate)
        let ending = try await WebSocketTests.within { await socket.ended() }
        #expect(ending == .failed(.webSocketHandshakeFailed(.unofferedExtension("permessage-deflate; server_max_window_bits=20"))))
    }

    @Test func theServersAnswerIsReadStrictly() throws {
        #expect(try WebSocketDeflate.parameters(from: "permessage-deflate") == WebSocketDeflate.Parameters())
        let full = try WebSocketDeflate.parameters(
            from:
                "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=10; client_max_window_bits=\"9\""
        )
        #expect(
            full
                == WebSocketDeflate.Parameters(
                    serverNoContextTakeover: true, clientNoContextTakeover: true, serverMaxWindowBits: 10, clientMaxWindowBits: 9))
        for refused in [
            "x-webkit-deflate-frame", "permessage-deflate, permessage-deflate", "permessage-deflate; server_max_window_bits=7",
            "permessage-deflate; client_max_window_bits", "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
            "permessage-deflate; unknown_parameter", "permessage-deflate; server_no_context_takeover=1",
        ] {
            #expect(throws: WebSocketHandshakeFailure.self, "\(refused)") { try WebSocketDeflate.parameters(from: refused) }
        }
    }

    @Test func compressAndDecompressRoundTripAcrossMessages() throws {
        for parameters in [WebSocketDeflate.Parameters(), .init(clientNoContextTakeover: true, clientMaxWindowBits: 8)] {
            let sender = try WebSocketDeflate(parameters)
            // The receiving side reads what a server reading this client would: the same rules.
            let receiver = try WebSocketDeflate(
                .init(serverNoContextTakeover: parameters.clientNoContextTakeover, serverMaxWindowBits: parameters.clientMaxWindowBits))
            for index in 0..<10 {
                let payload = Data(String(repeating: "message \(index % 3) ", count: 200).utf8)
                let compressed = sender.compress(payload)
                // Stored blocks, for a window of 8 bits: no smaller, still a valid stream.
                if parameters.clientMaxWindowBits > 8 { #expect(compressed.count < payload.count) }
                #expect(try receiver.decompress(compressed, limit: 1 << 20) == payload)
            }
        }
    }
}
