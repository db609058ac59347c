import Foundation
import Testing
@testable import Tern

/// The connectivity monitor, with a source the test switches (the machine's own network cannot
/// be switched off from a test), and the system's on this platform.
@Suite struct NetworkMonitorTests {
    /// A network the test turns on and off.
    final class Switch: Sendable {
        let isOn: Locked<Bool>
        init(_ isOn: Bool) { self.isOn = Locked(isOn) }
        func set(_ on: Bool) { isOn.withLock { $0 = on } }
        var monitor: NetworkMonitor {
            NetworkMonitor(interval: 0.02) { [isOn] in NetworkStatus(isReachable: isOn.withLock { $0 }, interfaces: [.wired]) }
        }
    }

    @Test func theSystemStatusCanBeRead() {
        let status = NetworkMonitor.system.status
        #if os(Linux)
        #expect(status.interfaces.contains(.loopback))
        #expect(status == LinuxNetworkStatus.read())
        #endif
    }

    @Test func changesArriveAsAStreamAndThroughClosures() async throws {
        let network = Switch(true)
        let monitor = network.monitor
        let seen = Locked<[Bool]>([])
        let token = monitor.onChange { status in seen.withLock { $0.append(status.isReachable) } }
        var iterator = monitor.updates.makeAsyncIterator()
        #expect(await iterator.next()?.isReachable == true)
        network.set(false)
        #expect(await iterator.next()?.isReachable == false)
        network.set(true)
        #expect(await iterator.next()?.isReachable == true)
        // The closure is called on the monitor's queue beside the stream, not before it: wait
        // (bounded) until it has seen both changes.
        _ = await eventually { seen.withLock { $0.count } >= 2 }
        #expect(seen.withLock { $0 } == [false, true])
        token.cancel()
    }

    @Test func offlineFailsFastWithoutTouchingTheServerAndServesStaleCache() async throws {
        let network = Switch(true)
        let key = Fixture.uniqueKey("offline")
        let client = Client(baseURL: try TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.networkMonitor = network.monitor
            $0.offlineBehavior = .failFast
            $0.cacheStorage.directory = FileManager.default.temporaryDirectory.appendingPathComponent(key)
        }
        var cached = Request<JSON>("cached", query: ["key": key])
        cached.cachePolicy = CachePolicy(read: .networkOnly, write: .memory, maxAge: 0, servesStaleOnError: true)
        _ = try await client.send(cached)
        network.set(false)
        try await Task.sleep(milliseconds: 100)
        let (result, seconds) = await client.timedResult(Request<JSON>("counted", query: ["key": key + "-plain"]))
        #expect(result.failure?.underlyingError?.code == .notConnectedToInternet)
        #expect(seconds < 1)
        #expect(try await Fixture.count(key + "-plain") == 0)
        #expect(try await client.send(cached).source == .stale)
        #expect(try await Fixture.count(key) == 1)
    }

    @Test func waitingForConnectivitySendsWhenTheNetworkIsBackOrTimesOut() async throws {
        let network = Switch(false)
        let key = Fixture.uniqueKey("waits")
        let client = Client(baseURL: try TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.networkMonitor = network.monitor
            $0.offlineBehavior = .waitForConnectivity
        }
        let outcomes = Outcomes()
        client.send(Request<JSON>("counted", query: ["key": key])) { outcomes.record(0, $0) }
        try await Task.sleep(milliseconds: 300)
        #expect(outcomes.all.isEmpty)
        #expect(try await Fixture.count(key) == 0)
        network.set(true)
        await outcomes.wait(for: 1)
        #expect(try outcomes.of(0).first?.get().value["n"]?.int == 1)

        network.set(false)
        try await Task.sleep(milliseconds: 100)
        let (result, _) = await client.timedResult(Request<JSON>("counted", query: ["key": key], timeout: 0.5))
        #expect(result.failure?.isTimeout == true)
        #expect(try await Fixture.count(key) == 1)
    }
}
