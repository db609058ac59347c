import Foundation
import Tern

/// The TCP floor of the WebSocket rows, through Tern's own byte stream: the connection a WebSocket
/// runs on (libcurl's on Linux), its events, its queue and an async caller,
/// echoing plain bytes with no framing, handshake or message API.
/// Thread safety: its state is locked; the stream's events come on its queue.
final class StreamEcho: Sendable {
    private struct State {
        var received = 0
        var wanted = 0
        var opened: CheckedContinuation<Bool, Never>?
        var waiter: CheckedContinuation<Bool, Never>?
        var hasEnded = false
    }

    private let stream: any WebSocketByteStream
    private let queue: DispatchQueue
    private let state = Locked(State())

    private init(stream: any WebSocketByteStream, queue: DispatchQueue) {
        self.stream = stream
        self.queue = queue
    }

    /// A connected stream to the plain TCP echo server on `port`.
    static func open(port: Int32) async throws -> StreamEcho {
        let url = URL(string: "http://127.0.0.1:\(port)/")!
        let queue = DispatchQueue(label: "tern-bench.StreamEcho")
        #if canImport(Glibc) || canImport(Musl)
        let made = TransportSettings().libcurlSocketStream(to: url, connectTimeout: 10, queue: queue)
        #else
        let made = Result<any WebSocketByteStream, TernError>.failure(.unsupportedConfiguration("the TCP floor is measured on Linux"))
        #endif
        let echo = StreamEcho(stream: try made.get(), queue: queue)
        let opened = await withCheckedContinuation { continuation in
            echo.state.withLock { $0.opened = continuation }
            echo.stream.open { event in echo.handle(event) }
        }
        guard opened else { throw URLError(.cannotConnectToHost) }
        return echo
    }

    /// Writes `payload` and waits until as many bytes came back; false if the stream ended.
    func echo(_ payload: Data) async -> Bool {
        await withCheckedContinuation { continuation in
            let now: Bool? = state.withLock { state in
                if state.hasEnded { return false }
                state.wanted = payload.count
                state.waiter = continuation
                return nil
            }
            if let now { return continuation.resume(returning: now) }
            // Written on the stream's queue, as a WebSocket writes.
            queue.async { self.stream.write(payload) { _ in } }
        }
    }

    func close() { stream.close {} }

    private func handle(_ event: WebSocketStreamEvent) {
        let (opened, waiter, result): (CheckedContinuation<Bool, Never>?, CheckedContinuation<Bool, Never>?, Bool) =
            state.withLock { state in
                switch event {
                case .opened:
                    defer { state.opened = nil }
                    return (state.opened, nil, true)
                case .received(let bytes):
                    state.received += bytes.count
                    guard let waiter = state.waiter, state.received >= state.wanted else { return (nil, nil, true) }
                    state.received -= state.wanted
                    state.waiter = nil
                    return (nil, waiter, true)
                case .ended:
                    state.hasEnded = true
                    defer { (state.opened, state.waiter) = (nil, nil) }
                    return (state.opened, state.waiter, false)
                }
            }
        opened?.resume(returning: result)
        waiter?.resume(returning: result)
    }
}
