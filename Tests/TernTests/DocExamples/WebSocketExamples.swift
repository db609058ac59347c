// swift-format-ignore-file
import Foundation
import Tern

// The code samples of the WebSockets article (Sources/Tern/Tern.docc/UsingWebSockets.md), compiled
// here; DocSamplesTests checks that every ```swift block of the article appears in this folder.
// Not reformatted: the article shows these lines.

func liveTemperatures(api: Client) async throws {
    var live = Request<Data>("live/temperatures", query: ["city": "101010100"])
    live.tags = ["live"]
    let socket = api.webSocket(live, options: WebSocketOptions(protocols: ["v2"]))
    try await socket.send("subscribe")
    for try await message in socket.messages {
        if case .text(let text) = message { print(text) }
    }
    print(await socket.ended())   // closed: 1000 (normal closure)
}

func liveOptions() -> WebSocketOptions {
    WebSocketOptions(protocols: ["v2", "v1"], maximumMessageSize: 1 << 20,
                     pingInterval: 15, pongTimeout: 5, reconnect: .exponential(maxAttempts: 8))
}

func liveWithClosures(api: Client) {
    api.webSocket(Request<Data>("live/temperatures")) { socket, event in
        switch event {
        case .opened(let subprotocol):
            print("open", subprotocol ?? "-")
            socket.send("subscribe") { error in if let error { print(error) } }
        case .message(.text(let text)): print(text)
        case .message(.data(let data)): print(data.count, "bytes")
        case .reconnecting(let attempt, let delay): print("reconnecting", attempt, "in", delay, "s")
        case .ended(let ending): print(ending)
        }
    }
}

func resubscribing(to socket: WebSocket) async {
    for await _ in socket.openings() { try? await socket.send("subscribe") }
}

func compressedLive(api: Client) -> WebSocket {
    let options = WebSocketOptions(compression: .permessageDeflate)
    return api.webSocket(Request<Data>("live/temperatures"), options: options)
}

struct LoggingTransport: WebSocketTransport {
    let wrapped: URLSessionTransport

    func start(_ request: TransportRequest,
               events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
        print(request.urlRequest.url?.absoluteString ?? "")
        return wrapped.start(request, events: events)
    }

    func invalidate() { wrapped.invalidate() }

    func openWebSocket(_ attempt: WebSocketAttempt) -> (any TransportTask)? {
        print("socket", attempt.request.url?.absoluteString ?? "")
        return wrapped.openWebSocket(attempt)
    }
}
