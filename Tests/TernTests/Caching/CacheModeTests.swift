import Foundation
import Testing
@testable import Tern

/// Read and write modes, expiry, persistence and stale-on-error, counting the server's hits.
@Suite struct CacheModeTests {
    @Test func cacheElseNetworkAnswersFromTheCacheWithoutTheNetwork() async throws {
        let key = Fixture.uniqueKey("else")
        let client = try CacheFixture.client(CachePolicy(read: .cacheElseNetwork, write: .both))
        let first = try await client.send(CacheFixture.resource(key))
        let second = try await client.send(CacheFixture.resource(key))
        #expect(first.source == .network && second.source == .cache)
        #expect(second.json["n"]?.int == 1 && second.statusCode == 200)
        #expect(try await CacheFixture.hits(key).all == 1)
    }

    @Test func networkOnlyStillWritesAndCacheOnlyReadsWhatItWrote() async throws {
        let key = Fixture.uniqueKey("only")
        let client = try CacheFixture.client()
        let cacheOnly = CacheFixture.resource(key).caching(CachePolicy(read: .cacheOnly))
        guard case .cacheMiss(let url)? = await client.completionResult(cacheOnly).0.failure else {
            Issue.record("a cache-only miss must be TernError.cacheMiss"); return
        }
        #expect(url?.query?.contains(key) == true)
        #expect(try await CacheFixture.hits(key).all == 0, "a cache-only request never goes to the network")
        _ = try await client.send(CacheFixture.resource(key).caching(CachePolicy(write: .memory)))
        _ = try await client.send(CacheFixture.resource(key).caching(CachePolicy(write: .memory)))
        #expect(try await CacheFixture.hits(key).all == 2, "network-only always goes to the network")
        let hit = try await client.send(cacheOnly)
        #expect(hit.source == .cache && hit.json["n"]?.int == 2)
    }

    @Test func cacheThenNetworkDeliversTheHitFirstThenTheNetwork() async throws {
        let key = Fixture.uniqueKey("then")
        let client = try CacheFixture.client(CachePolicy(read: .cacheThenNetwork, write: .both))
        let miss = await client.cachedAndFinal(CacheFixture.resource(key))
        #expect(try miss.hits.isEmpty && miss.result.get().json["n"]?.int == 1)
        let both = await client.cachedAndFinal(CacheFixture.resource(key))
        #expect(both.hits.count == 1 && both.hits.first?.source == .cache && both.hits.first?.json["n"]?.int == 1)
        let fresh = try both.result.get()
        #expect(fresh.source == .network && fresh.json["n"]?.int == 2)
        // The network response replaced the entry: the next hit is the newer one.
        let third = await client.cachedAndFinal(CacheFixture.resource(key))
        #expect(third.hits.first?.json["n"]?.int == 2)
        #expect(try await CacheFixture.hits(key).all == 3)
    }

    @Test func writeModesDecideWhatAnotherClientSees() async throws {
        let key = Fixture.uniqueKey("write")
        let directory = CacheFixture.directory()
        let cacheOnly = CachePolicy(read: .cacheOnly)
        for (mode, persists) in [(CachePolicy.Write.none, false), (.memory, false), (.disk, true), (.both, true)] {
            let request = CacheFixture.resource(key + "\(mode.rawValue)")
            let writer = try CacheFixture.client(CachePolicy(write: mode), directory: directory)
            _ = try await writer.send(request)
            let sameClient = await writer.completionResult(request.caching(cacheOnly)).0
            let foundInSameClient = (try? sameClient.get()) != nil
            #expect(foundInSameClient == (mode != .none), "mode \(mode.rawValue) in the same client")
            // A new client on the same directory: only disk entries survive (an app restart).
            let reader = try CacheFixture.client(directory: directory)
            let restarted = await reader.completionResult(request.caching(cacheOnly)).0
            let foundAfterRestart = (try? restarted.get()) != nil
            #expect(foundAfterRestart == persists, "mode \(mode.rawValue) after a restart")
        }
    }

    @Test func expiredEntriesAreMissesAndAreRemoved() async throws {
        // A loaded machine can stretch any pause: each check asserts only what the clock proves.
        let key = Fixture.uniqueKey("expiry")
        let maxAge = 0.5
        let client = try CacheFixture.client(CachePolicy(read: .cacheElseNetwork, write: .both, maxAge: maxAge))
        let before = Date()  // the entry is stored after this, and read before the second send returns
        _ = try await client.send(CacheFixture.resource(key))
        let early = try await client.send(CacheFixture.resource(key))
        if Date().timeIntervalSince(before) < maxAge * 0.8 { #expect(early.source == .cache) }
        try await Task.sleep(milliseconds: 600)
        let cacheOnly = await client.completionResult(CacheFixture.resource(key).caching(CachePolicy(read: .cacheOnly, maxAge: maxAge))).0
        #expect(cacheOnly.failure.map { if case .cacheMiss = $0 { true } else { false } } == true)
        // Read after expiry: removed, not left behind.
        #expect(client.cacheSize == 0)
        #expect(try await client.send(CacheFixture.resource(key)).source == .network)
        #expect(try await CacheFixture.hits(key).all == (early.source == .cache ? 2 : 3))
    }

    @Test(arguments: ["503", "reset"])
    func staleEntriesServeWhenTheNetworkFails(failure: String) async throws {
        let key = Fixture.uniqueKey("stale-\(failure)")
        let policy = CachePolicy(write: .both, maxAge: 0.2, servesStaleOnError: true)
        let client = try CacheFixture.client(policy)
        let stored = try await client.send(CacheFixture.resource(key))
        try await Task.sleep(milliseconds: 300)  // expired, kept for stale-on-error
        try await CacheFixture.setState(key, failure)
        let stale = try await client.send(CacheFixture.resource(key))
        #expect(stale.source == .stale && stale.data == stored.data)
        // Without stale-on-error the failure is the answer.
        let strict = await client.completionResult(CacheFixture.resource(key).caching(CachePolicy(write: .both))).0
        #expect(strict.failure != nil)
        try await CacheFixture.setState(key, "up")
        #expect(try await client.send(CacheFixture.resource(key)).source == .network)
    }

    @Test func aStoppedServerServesStaleForCacheThenNetworkToo() async throws {
        // The key ignores the host, so a client of a dead port reads what the live one stored.
        let key = Fixture.uniqueKey("dead")
        let directory = CacheFixture.directory()
        let hostless: @Sendable (String) -> String = {
            $0.replacingOccurrences(of: #"//[^/]+/"#, with: "//host/", options: .regularExpression)
        }
        let policy = CachePolicy(read: .cacheThenNetwork, write: .both, keyTransform: hostless, servesStaleOnError: true)
        _ = try await CacheFixture.client(policy, directory: directory).send(CacheFixture.resource(key))
        let dead = try CacheFixture.client(policy, directory: directory, base: "http://127.0.0.1:9")
        let (hits, result) = await dead.cachedAndFinal(CacheFixture.resource(key))
        #expect(hits.first?.source == .cache)
        #expect(try result.get().source == .stale)
    }
}
