import Foundation
import Testing

@testable import Tern

/// The size limit covers every streamed delivery — closure, delegate, `ByteStream` — and `lines`
/// and server-sent `events` bound one line and one event, on every transport. The fixture's
/// `/huge?chunked=1` sends zeros without end and without a line feed.
@Suite struct StreamLimitTests {
    static let limit = 4 << 20

    static func client(over transport: TransportKind) throws -> Client {
        transport.client(try TestServers.fixture()) {
            $0.timeout = 30
            $0.maximumResponseSize = limit
        }
    }

    /// Collects what a streamed request delivered.
    final class Received: @unchecked Sendable {
        // Sendable: `bytes` and `events` are only touched under `lock`.
        private let lock = NSLock()
        private var bytes = 0
        private var events = 0
        func add(bytes count: Int) { lock.withLock { bytes += count } }
        func addEvent() { lock.withLock { events += 1 } }
        var total: (bytes: Int, events: Int) { lock.withLock { (bytes, events) } }
    }

    final class Delegate: TransferDelegate, @unchecked Sendable {
        // Sendable: `result` is set once, on the callback queue, and read after `done` fires.
        let received = Received()
        let done = DispatchSemaphore(value: 0)
        var result: Result<Data, TernError>?
        func request(_ request: RequestHandle, didReceive chunk: Data) { received.add(bytes: chunk.count) }
        func request(_ request: RequestHandle, didReceive event: ServerSentEvent) { received.addEvent() }
        func request(_ request: RequestHandle, didSucceedWith response: Response<any Sendable>) {
            result = .success(response.data)
            done.signal()
        }
        func request(_ request: RequestHandle, didFailWith error: TernError) {
            result = .failure(error)
            done.signal()
        }
    }

    /// Streams `query`'s `/huge` to a closure: the outcome and the bytes the closure got.
    static func streamToClosure(_ query: Parameters, over transport: TransportKind) async throws -> (Result<Response<Data>, TernError>, Int)
    {
        let received = Received()
        let client = try Self.client(over: transport)
        let result = await withCheckedContinuation { continuation in
            client.stream(Request<Data>("huge", query: query), onChunk: { received.add(bytes: $0.count) }) {
                continuation.resume(returning: $0)
            }
        }
        return (result, received.total.bytes)
    }

    @Test(arguments: TransportKind.all)
    func anEndlessBodyStreamedToAClosureStopsAtTheLimit(over transport: TransportKind) async throws {
        let (result, bytes) = try await Self.streamToClosure(["chunked": 1], over: transport)
        #expect(result.failure == .responseTooLarge(limit: Self.limit), "\(result)")
        #expect(bytes <= Self.limit)
    }

    @Test(arguments: TransportKind.all)
    func anAnnouncedBodyOverTheLimitIsRefusedBeforeAnyChunk(over transport: TransportKind) async throws {
        let (result, bytes) = try await Self.streamToClosure(["announce": 50_000_000], over: transport)
        #expect(result.failure == .responseTooLarge(limit: Self.limit), "\(result)")
        #expect(bytes == 0)
    }

    @Test(arguments: TransportKind.all)
    func anEndlessBodyStreamedToADelegateStopsAtTheLimit(over transport: TransportKind) async throws {
        let delegate = Delegate()
        try Self.client(over: transport).stream(Request<Data>("huge", query: ["chunked": 1]), delegate: delegate)
        await onThreadOfItsOwn { _ = delegate.done.wait(timeout: .now() + 30) }
        #expect(delegate.result?.failure == .responseTooLarge(limit: Self.limit), "\(String(describing: delegate.result))")
        #expect(delegate.received.total.bytes <= Self.limit)
    }

    @Test(arguments: TransportKind.all)
    func aByteStreamStopsAtTheLimit(over transport: TransportKind) async throws {
        var bytes = 0
        do {
            for try await chunk in try Self.client(over: transport).stream(Request<Data>("huge", query: ["chunked": 1])) {
                bytes += chunk.count
            }
            Issue.record("an endless body ended")
        } catch {
            #expect(error as? TernError == .responseTooLarge(limit: Self.limit))
        }
        #expect(bytes <= Self.limit)
    }

    /// An event's bound counts the data it has collected, not only its current line: 40 lines
    /// of 100 bytes pass a 1 KB bound line by line, not as one event.
    @Test(arguments: TransportKind.all)
    func anEventOfManyShortLinesStopsAtItsBound(over transport: TransportKind) async throws {
        var events = try Self.client(over: transport).stream(Request<Data>("sse", query: ["script": "many-lines"])).events
        events.maximumEventSize = 1024
        var received: [ServerSentEvent] = []
        await #expect(throws: TernError.responseTooLarge(limit: 1024)) {
            for try await event in events { received.append(event) }
        }
        #expect(received.count == 0)
        // With room for it, the same stream gives both events.
        events.maximumEventSize = 8192
        received = []
        for try await event in events { received.append(event) }
        #expect(received.map(\.data.count) == [40 * 100 + 39, 5])
    }

    /// With the request's limit lifted, a line or an event without end still stops at its own
    /// bound (1 MB by default, or the reader's).
    @Test(arguments: TransportKind.all)
    func aLineOrAnEventWithoutEndStopsAtItsOwnBound(over transport: TransportKind) async throws {
        var unlimited = Request<Data>("huge", query: ["chunked": 1])
        unlimited.maximumResponseSize = Int.max
        let client = try Self.client(over: transport)
        await #expect(throws: TernError.responseTooLarge(limit: Lines.defaultMaximumLineLength)) {
            for try await _ in client.stream(unlimited).lines {}
        }
        var lines = client.stream(unlimited).lines
        lines.maximumLineLength = 64 << 10
        await #expect(throws: TernError.responseTooLarge(limit: 64 << 10)) {
            for try await _ in lines {}
        }
        var events = Request<Data>("huge", query: ["chunked": 1, "type": "text/event-stream"])
        events.maximumResponseSize = Int.max
        await #expect(throws: TernError.responseTooLarge(limit: ServerSentEvents.defaultMaximumEventSize)) {
            for try await _ in client.stream(events).events {}
        }
        let closureResult = await withCheckedContinuation { continuation in
            client.events(events, onEvent: { _ in }) { continuation.resume(returning: $0) }
        }
        #expect(closureResult.failure == .responseTooLarge(limit: ServerSentEvents.defaultMaximumEventSize))
        let delegate = Delegate()
        client.stream(events, delegate: delegate)
        await onThreadOfItsOwn { _ = delegate.done.wait(timeout: .now() + 30) }
        #expect(delegate.result?.failure == .responseTooLarge(limit: ServerSentEvents.defaultMaximumEventSize))
    }
}
