import Foundation
import Testing
@testable import Tern

/// Lifetime strategies, with real deallocation of owners and handles.
@Suite struct LifetimeTests {
    let client: Client

    init() throws {
        client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
    }

    func slow(_ key: String, seconds: Double = 1) -> Request<JSON> {
        Request<JSON>("counted", query: ["key": key, "seconds": seconds])
    }

    @Test func aRequestOutlivesItsDroppedHandleByDefault() async throws {
        let outcomes = Outcomes()
        _ = client.send(slow(Fixture.uniqueKey("default"), seconds: 0.3)) { outcomes.record(0, $0) }
        await outcomes.wait(for: 1)
        #expect(outcomes.of(0).first?.success != nil)
    }

    @Test func aRequestIsCancelledWhenItsOwnerIsDeallocated() async throws {
        let outcomes = Outcomes()
        var screen: Screen? = Screen()
        weak let weakScreen = screen
        let endedAt = Locked<Date?>(nil)
        client.send(slow(Fixture.uniqueKey("owner"), seconds: 6).owned(by: screen!)) { result in
            endedAt.withLock { $0 = Date() }
            outcomes.record(0, result)
        }
        let started = Date()
        screen = nil
        #expect(weakScreen == nil)
        await outcomes.wait(for: 1, seconds: 8)
        #expect(outcomes.of(0).map(\.failure) == [.cancelled(.ownerReleased)])
        // Timed in the callback itself: the test task may resume late on a loaded machine.
        let took = try #require(endedAt.withLock { $0 }).timeIntervalSince(started)
        #expect(took < 4, "the owner's release must be noticed long before the server answers (took \(took) s)")
        #expect(client.runningRequests.isEmpty)
    }

    @Test func anOwnedRequestWhoseOwnerLivesCompletes() async throws {
        let screen = Screen()
        let outcomes = Outcomes()
        client.send(slow(Fixture.uniqueKey("owner-alive"), seconds: 0.2).owned(by: screen)) { outcomes.record(0, $0) }
        await outcomes.wait(for: 1)
        #expect(outcomes.of(0).first?.success != nil)
        withExtendedLifetime(screen) {}
    }

    @Test func releasingTheHandleCancelsSilently() async throws {
        let key = Fixture.uniqueKey("handle")
        let outcomes = Outcomes()
        var request = slow(key, seconds: 3)
        request.lifetime = .handleReleased
        var handle: RequestHandle? = client.send(request) { outcomes.record(0, $0) }
        weak let weakHandle = handle
        #expect(client.runningRequests.count == 1)
        handle = nil
        #expect(weakHandle == nil)
        #expect(client.runningRequests.isEmpty, "releasing the handle cancels at once")
        try await Task.sleep(milliseconds: 300)
        #expect(outcomes.of(0).isEmpty, "a released handle gets no callback")
    }

    @Test func aHeldHandleKeepsAHandleReleasedRequestAlive() async throws {
        var request = slow(Fixture.uniqueKey("handle-held"), seconds: 0.2)
        request.lifetime = .handleReleased
        let outcomes = Outcomes()
        let handle = client.send(request) { outcomes.record(0, $0) }
        await outcomes.wait(for: 1)
        #expect(outcomes.of(0).first?.success != nil)
        withExtendedLifetime(handle) {}
    }

    @Test func aDetachedRequestRunsOnButDeliversOnlyToALiveHandle() async throws {
        let key = Fixture.uniqueKey("detached")
        var request = slow(key, seconds: 0.3)
        request.lifetime = .detached
        let outcomes = Outcomes()
        var dropped: RequestHandle? = client.send(request) { outcomes.record(0, $0) }
        let kept = client.send(request) { outcomes.record(1, $0) }
        dropped = nil
        _ = dropped
        await outcomes.wait(for: 1)
        try await Task.sleep(milliseconds: 300)
        #expect(outcomes.of(0).isEmpty, "nobody listens to the dropped one")
        #expect(outcomes.of(1).first?.success != nil)
        #expect(try await Fixture.count(key) == 2, "both ran to completion")
        #expect(client.runningRequests.isEmpty)
        withExtendedLifetime(kept) {}
    }
}
