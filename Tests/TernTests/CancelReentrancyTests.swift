import Foundation
import Testing

@testable import Tern

/// No callback runs inside `cancel`: code that cancels on the main queue (in
/// `viewWillDisappear`, say) while changing state its completions also touch meets no
/// re-entrancy. The `.cancelled` callbacks come after the call returns, on their queue, and say
/// why the request was cancelled.
@Suite struct CancelReentrancyTests {
    enum Way: String, CaseIterable, CustomTestStringConvertible {
        case tag, url, all, handle, superseded, owner
        var testDescription: String { rawValue }
    }

    final class Owner: Sendable {}

    @Test(arguments: TransportKind.all, Way.allCases)
    func noCallbackRunsInsideCancelOnTheMainQueue(over transport: TransportKind, _ way: Way) async throws {
        let client = transport.client(try TestServers.fixture()) { $0.callbackQueue = .main }
        let stalled = "\(try TestServers.fixture())/stall?seconds=5&key=\(Fixture.uniqueKey("reentrancy"))"
        let results = Locked<[TernError?]>([])
        let insideCancel = Locked(false)
        let ranInside = Locked(0)
        let done = DispatchSemaphore(value: 0)
        let count = way == .superseded ? 4 : 5
        await withCheckedContinuation { (ready: CheckedContinuation<Void, Never>) in
            DispatchQueue.main.async {
                var owner: Owner? = Owner()
                var handles: [RequestHandle] = []
                for _ in 0..<(way == .superseded ? 4 : 5) {
                    var request = Request<JSON>(stalled).tagged("screen")
                    if way == .superseded { request = request.repeating(.cancelOlder, key: "search") }
                    if way == .owner, let owner { request = request.owned(by: owner) }
                    handles.append(
                        client.send(request) { result in
                            if insideCancel.withLock({ $0 }) { ranInside.withLock { $0 += 1 } }
                            results.withLock { $0.append(result.failure) }
                            done.signal()
                        })
                }
                insideCancel.withLock { $0 = true }
                switch way {
                case .tag: client.cancel(tag: "screen")
                case .url: client.cancel(url: stalled)
                case .all: client.cancelAll()
                case .handle: handles.forEach { $0.cancel() }
                case .superseded: handles.append(client.send(Request<JSON>(stalled).repeating(.cancelOlder, key: "search")) { _ in })
                case .owner: owner = nil
                }
                insideCancel.withLock { $0 = false }
                _ = owner
                ready.resume()
            }
        }
        await onThreadOfItsOwn {
            for _ in 0..<count { _ = done.wait(timeout: .now() + 10) }
        }
        #expect(ranInside.withLock { $0 } == 0, "callbacks ran inside the cancel")
        let errors = results.withLock { $0 }
        #expect(errors.count == count)
        let expected: TernError.CancellationReason =
            switch way {
            case .superseded: .superseded
            case .owner: .ownerReleased
            default: .explicit
            }
        #expect(errors.allSatisfy { $0 == .cancelled(expected) }, "\(errors)")
        if way == .superseded { client.cancelAll() }
    }
}
