import Foundation
import Testing

@testable import Tern

/// The machinery every capability shares: each piece on its own.
@Suite struct ToolkitTests {
    @Test func backoffDoublesThenCapsThenJittersWithinTheCap() {
        let exact = Backoff(base: 0.5, maximum: 3, jitter: 0)
        #expect((1...5).map(exact.delay(attempt:)) == [0.5, 1, 2, 3, 3])
        #expect(exact.delay(attempt: 0) == 0.5 && exact.delay(attempt: 10_000) == 3)
        let jittered = Backoff(base: 1, maximum: 4, jitter: 0.2)
        for _ in 0..<500 {
            let second = jittered.delay(attempt: 2)
            #expect(second >= 1.6 && second <= 2.4)
            // At the cap the jitter still spreads waits, below the cap only.
            let capped = jittered.delay(attempt: 20)
            #expect(capped >= 3.2 && capped <= 4)
        }
        let atCap = (0..<200).map { _ in jittered.delay(attempt: 20) }
        #expect(atCap.contains { $0 < 3.9 }, "jitter applies after the cap")
    }

    @Test func aWeakBoxHoldsObjectsAndDelegatesWithoutKeepingThem() {
        final class Owner: Sendable {}
        var owner: Owner? = Owner()
        let box = Weak<AnyObject>(owner)
        let typed = Weak(owner)
        #expect(box.object != nil && typed.object === owner)
        owner = nil
        #expect(box.object == nil && typed.object == nil)

        var delegate: (any OutboxDelegate)? = RecordingOutboxDelegate()
        let delegateBox = Weak<AnyObject>(delegate)
        #expect(delegateBox.object as? any OutboxDelegate != nil)
        delegate = nil
        #expect(delegateBox.object == nil)
        let late = Weak<RequestHandle>()
        #expect(late.object == nil)
    }

    @Test func aBroadcastReachesEveryListenerInOrderUntilItStopsListening() {
        let broadcast = Broadcast<Int>()
        let heard = Locked<[Int]>([])
        #expect(!broadcast.hasListeners)
        let stop = broadcast.listen { value in heard.withLock { $0.append(value) } }
        #expect(broadcast.hasListeners)
        (1...3).forEach(broadcast.send)
        stop?()
        broadcast.send(4)
        #expect(heard.withLock { $0 } == [1, 2, 3] && !broadcast.hasListeners)
    }

    @Test func aBroadcastStreamStartsWithItsFirstEventsAndEndsWithTheBroadcast() async {
        let broadcast = Broadcast<String>()
        let stream = broadcast.stream(first: ["now"])
        broadcast.send("later")
        broadcast.finish()
        var seen: [String] = []
        for await value in stream { seen.append(value) }
        #expect(seen == ["now", "later"])
        // Made after the end: its first events, then the end at once.
        var after: [String] = []
        for await value in broadcast.stream(first: ["last"]) { after.append(value) }
        #expect(after == ["last"] && broadcast.listen({ _ in }) == nil)
    }

    @Test func aStoppedStreamStopsListening() async {
        let broadcast = Broadcast<Int>()
        do {
            var iterator = broadcast.stream().makeAsyncIterator()
            broadcast.send(1)
            #expect(await iterator.next() == 1)
        }
        // Dropping the stream ends its iteration: its listener goes.
        for _ in 0..<100 where broadcast.hasListeners { try? await Task.sleep(nanoseconds: 10_000_000) }
        #expect(!broadcast.hasListeners)
    }

    #if canImport(Glibc) || canImport(Musl)
    @Test func aDynamicLibrarySaysWhichLibraryOrFunctionIsMissing() throws {
        #expect(throws: DynamicLibrary.LoadError.self) { try DynamicLibrary(["libtern-absent.so.9"]) }
        let zlib = try DynamicLibrary(["libz.so.1", "libz.so"])
        let version = try zlib.function("zlibVersion", as: (@convention(c) () -> UnsafePointer<CChar>?).self)
        #expect(version().map { String(cString: $0) }?.first?.isNumber == true)
        do {
            _ = try zlib.function("tern_no_such_function", as: (@convention(c) () -> Void).self)
            Issue.record("a missing function was found")
        } catch {
            #expect(error.description.contains("tern_no_such_function"))
        }
    }
    #endif

    @Test func aBoundedQueueHoldsItsProducerBackAndLetsItGoAtHalf() async throws {
        let held = Locked<[Bool]>([])
        let queue = BackpressureQueue<Data>(limit: 10, size: \.count) { hold in held.withLock { $0.append(hold) } }
        for _ in 0..<4 { queue.append(Data(count: 3)) }
        #expect(held.withLock { $0 } == [true] && queue.buffered == 12)
        _ = try await queue.next()
        _ = try await queue.next()
        #expect(held.withLock { $0 } == [true] && queue.buffered == 6)
        _ = try await queue.next()
        #expect(held.withLock { $0 } == [true, false])
        queue.finish(.failure(URLError(.networkConnectionLost)))
        #expect(try await queue.next()?.count == 3)
        await #expect(throws: URLError.self) { try await queue.next() }
        #expect(try await queue.next() == nil)
    }

    @Test func aCancelledReaderOfABoundedQueueStopsWaiting() async {
        let queue = BackpressureQueue<Int>(limit: 4, size: { _ in 1 }) { _ in }
        let reader = Task { try await queue.next() }
        try? await Task.sleep(nanoseconds: 20_000_000)
        reader.cancel()
        await #expect(throws: CancellationError.self) { try await reader.value }
    }
}

/// An outbox delegate that records nothing: a class-bound protocol's instance, for `Weak`.
private final class RecordingOutboxDelegate: OutboxDelegate {
    func outbox(_ outbox: Outbox, didRecord event: OutboxEvent) {}
}
