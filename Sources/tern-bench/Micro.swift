import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Tern

/// A transport that answers every request at once with a 2-byte JSON body: measures Tern's own
/// cost per request with no network and no URLSession underneath. It says it sends the wire
/// headers itself, as the built-in transports do, so the client does not add them per request
/// (about 2.5 µs for a stub or custom transport that does not).
struct InstantTransport: Transport {
    var sendsWireHeaders: Bool { true }
    func start(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
        let response = HTTPURLResponse(
            url: request.urlRequest.url!, statusCode: 200, httpVersion: "HTTP/1.1",
            headerFields: ["Content-Type": "application/json", "Content-Length": "2"])!
        events(.head(ResponseHead(response)))
        events(.data(Data("{}".utf8)))
        events(.completed(nil))
        return NothingToCancel()
    }
    func invalidate() {}
}

/// Like `InstantTransport`, but answers on a serial queue as URLSession does (one hop).
struct QueuedTransport: Transport {
    let queue = DispatchQueue(label: "queued-transport")
    var sendsWireHeaders: Bool { true }
    func start(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
        queue.async { _ = InstantTransport().start(request, events: events) }
        return NothingToCancel()
    }
    func invalidate() {}
}

struct NothingToCancel: TransportTask { func cancel() {} }

/// Microbenchmarks of Tern's own code, CPU µs per operation.
enum Micro {
    static func run(count: Int) async {
        let client = Client(baseURL: "http://127.0.0.1:1") {
            $0.transport = InstantTransport()
            $0.callbackQueue = .immediate
        }
        func measure(_ name: String, _ body: () async -> Void) async {
            let cpu = cpuSeconds()
            await body()
            print(String(format: "%-40@ %8.2f µs CPU per op", name as NSString, (cpuSeconds() - cpu) / Double(count) * 1e6))
        }
        let queued = Client(baseURL: "http://127.0.0.1:1") { $0.transport = QueuedTransport() }
        let queue = DispatchQueue(label: "baseline")
        await measure("baseline: queue hop + continuation") {
            for _ in 0..<count {
                _ = await withCheckedContinuation { continuation in
                    queue.async {
                        let url = URL(string: "http://127.0.0.1:1/tiny.json")!
                        let response = HTTPURLResponse(
                            url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                            headerFields: ["Content-Type": "application/json", "Content-Length": "2"])!
                        continuation.resume(returning: (response, Data("{}".utf8)))
                    }
                }
            }
        }
        await measure("async send, Data, queued transport") {
            for _ in 0..<count { _ = try? await queued.send(Request<Data>("tiny.json")) }
        }
        let untimed = Client(baseURL: "http://127.0.0.1:1") {
            $0.transport = QueuedTransport(); $0.timeout = .infinity
        }
        await measure("async send, Data, queued, no deadline") {
            for _ in 0..<count { _ = try? await untimed.send(Request<Data>("tiny.json")) }
        }
        await measure("async send, Data, instant transport") {
            for _ in 0..<count { _ = try? await client.send(Request<Data>("tiny.json")) }
        }
        await measure("async send, JSON, instant transport") {
            for _ in 0..<count { _ = try? await client.send(Request<JSON>("tiny.json")) }
        }
        await measure("closure send, Data, instant transport") {
            for _ in 0..<count {
                await withCheckedContinuation { done in client.send(Request<Data>("tiny.json")) { _ in done.resume() } }
            }
        }
        let withParameterHook = Client(baseURL: "http://127.0.0.1:1") {
            $0.transport = InstantTransport()
            $0.callbackQueue = .immediate
            $0.hooks.rewriteParameters { $0.query["device_id"] = "bench" }
        }
        await measure("closure send, one parameter hook") {
            for _ in 0..<count {
                await withCheckedContinuation { done in withParameterHook.send(Request<Data>("tiny.json")) { _ in done.resume() } }
            }
        }
        let withQuery = Request<Data>("tiny.json", query: ["device_id": "bench"])
        await measure("closure send, same query without a hook") {
            for _ in 0..<count {
                await withCheckedContinuation { done in client.send(withQuery) { _ in done.resume() } }
            }
        }
        let withAdapter = Client(baseURL: "http://127.0.0.1:1") {
            $0.transport = InstantTransport()
            $0.callbackQueue = .immediate
            $0.hooks.adapt { request, _ in
                var request = request
                request.setValue("bench", forHTTPHeaderField: "X-Device")
                return request
            }
        }
        await measure("closure send, one async adapter") {
            for _ in 0..<count {
                await withCheckedContinuation { done in withAdapter.send(Request<Data>("tiny.json")) { _ in done.resume() } }
            }
        }
        await measure("URL(string:) + URLRequest") {
            for _ in 0..<count { _ = URLRequest(url: URL(string: "http://127.0.0.1:1/tiny.json")!) }
        }
        await measure("URLComponents(string:).url") {
            for _ in 0..<count { _ = URLComponents(string: "http://127.0.0.1:1/tiny.json")!.url }
        }
        await measure("DispatchSource timer make+resume+cancel") {
            for _ in 0..<count {
                let timer = DispatchSource.makeTimerSource(queue: .global())
                timer.schedule(deadline: .now() + 60)
                timer.setEventHandler {}
                timer.resume()
                timer.cancel()
            }
        }
        await measure("HTTPURLResponse init") {
            for _ in 0..<count {
                _ = HTTPURLResponse(url: URL(string: "http://h/x")!, statusCode: 200, httpVersion: nil, headerFields: ["A": "b"])
            }
        }
    }

    /// A hop to a global queue and back against parsing JSON bodies of 1, 16 and 64 KB: where
    /// decoding inline stops paying (`ProcessingThresholds`).
    static func thresholds(count: Int) async {
        func measure(_ name: String, _ body: () async -> Void) async {
            let cpu = cpuSeconds()
            await body()
            print(String(format: "%-40@ %8.2f µs CPU per op", name as NSString, (cpuSeconds() - cpu) / Double(count) * 1e6))
        }
        await measure("hop to a global queue and back") {
            for _ in 0..<count {
                await withCheckedContinuation { done in DispatchQueue.global(qos: .userInitiated).async { done.resume() } }
            }
        }
        for kilobytes in [1, 16, 64] {
            let items = (0..<(kilobytes * 1024 / 40)).map { "{\"id\": \($0), \"name\": \"city-\($0 % 1000)\"}" }
            let body = Data(("[" + items.joined(separator: ", ") + "]").utf8)
            let rounds = max(1, count / (kilobytes * 8))
            let cpu = cpuSeconds()
            for _ in 0..<rounds { _ = try? JSON(data: body) }
            print(
                String(
                    format: "%-40@ %8.2f µs CPU per op", "JSON parse \(body.count) bytes" as NSString,
                    (cpuSeconds() - cpu) / Double(rounds) * 1e6))
        }
    }
}
