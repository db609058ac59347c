import Foundation
import Testing

@testable import Tern

/// The send buffer: `send` returns at once while it has room, waits for the network past it, and
/// never takes a message after `close`. Against the `websockets` package's server.
@Suite struct WebSocketSendBufferTests {
    /// A server that stops reading (`/silent`: its library stops after 16 queued messages) holds
    /// a fast sender back: some `send` stops returning long before 64 MiB have gone, and a cancel
    /// ends it with the cancellation.
    @Test func aServerThatStopsReadingHoldsTheSenderBack() async throws {
        let socket = try WebSocketTests.client().webSocket(
            Request<Data>("silent"), options: WebSocketOptions(sendBufferSize: 256 << 10, pingInterval: nil))
        try await WebSocketTests.within { try await socket.opened() }
        let chunk = Data(count: 64 << 10)
        let returned = Counter()
        let sender = Task {
            do {
                for _ in 0..<1024 {
                    try await socket.send(chunk)
                    returned.increment()
                }
                return TernError?.none
            } catch { return error as? TernError }
        }
        // Wait until sends stop returning: the count holds still for a second.
        var last = -1
        while returned.count != last, returned.count < 1024 {
            last = returned.count
            try await Task.sleep(milliseconds: 1000)
        }
        #expect(returned.count < 1024, "all 64 MiB were taken by a server that does not read")
        socket.cancel()
        let outcome = try await WebSocketTests.within { await sender.value }
        #expect(outcome == .cancelled(.explicit), "\(String(describing: outcome))")
        #expect(await socket.ended() == .failed(.cancelled(.explicit)))
    }

    /// Sends that fit the buffer return before their bytes are written, in order; a send after
    /// `close` is refused, never silently dropped.
    @Test func sendsAreTakenInOrderAndNoneAfterClose() async throws {
        let socket = try WebSocketTests.client().webSocket(Request<Data>("echo"))
        try await WebSocketTests.within {
            try await socket.opened()
            for index in 0..<200 { try await socket.send("\(index)") }
            var iterator = socket.messages.makeAsyncIterator()
            for index in 0..<200 { #expect(try await iterator.next() == .text("\(index)")) }
            socket.close()
            do {
                try await socket.send("late")
                Issue.record("a send after close was taken")
            } catch {
                #expect((error as? TernError)?.isWebSocketClosed == true, "\(error)")
            }
        }
        #expect(await socket.ended() == .closed(.normalClosure, reason: ""))
    }
}

extension TernError {
    /// `.webSocketFailed`: what a send to a closed socket throws.
    fileprivate var isWebSocketClosed: Bool {
        if case .webSocketFailed = self { true } else { false }
    }
}
