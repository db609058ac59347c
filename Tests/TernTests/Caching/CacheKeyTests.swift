import Foundation
import Testing
import TernCache
@testable import Tern

/// What the cache key is made of, the store predicate, `no-store`, and cache management.
@Suite struct CacheKeyTests {
    let policy = CachePolicy(read: .cacheElseNetwork, write: .both)

    @Test func listedHeadersSplitEntriesAndUnlistedOnesDoNot() async throws {
        let key = Fixture.uniqueKey("headers")
        var keyed = policy
        keyed.keyHeaders = ["Accept-Language"]
        let client = try CacheFixture.client(keyed)
        var chinese = CacheFixture.resource(key)
        chinese.headers = ["Accept-Language": "zh-CN", "X-Trace": "1"]
        var english = chinese
        english.headers = ["Accept-Language": "en", "X-Trace": "1"]
        var otherTrace = chinese
        otherTrace.headers["X-Trace"] = "2"
        _ = try await client.send(chinese)
        #expect(try await client.send(english).source == .network, "a listed header is part of the key")
        #expect(try await client.send(otherTrace).source == .cache, "an unlisted header is not")
        #expect(try await CacheFixture.hits(key).all == 2)
    }

    @Test func queryOrderIgnoredParametersNamespacesAndTransforms() async throws {
        let key = Fixture.uniqueKey("parts")
        var ignoring = policy
        ignoring.ignoredParameters = ["ts"]
        let client = try CacheFixture.client(ignoring)
        _ = try await client.send(Request<JSON>("cached?ts=1&key=\(key)&q=a"))
        #expect(try await client.send(Request<JSON>("cached?q=a&key=\(key)&ts=2")).source == .cache, "order and ts ignored")
        #expect(try await client.send(Request<JSON>("cached?q=b&key=\(key)&ts=2")).source == .network, "q is part of the key")
        var upgraded = ignoring
        upgraded.namespace = "app 2.0"
        #expect(
            try await client.send(Request<JSON>("cached?q=a&key=\(key)").caching(upgraded)).source == .network,
            "a new namespace misses every old entry")
        var everyQueryAlike = policy
        everyQueryAlike.keyTransform = { $0.replacingOccurrences(of: #"q=[a-z]"#, with: "q=*", options: .regularExpression) }
        _ = try await client.send(Request<JSON>("cached?key=\(key)&q=x").caching(everyQueryAlike))
        #expect(try await client.send(Request<JSON>("cached?key=\(key)&q=y").caching(everyQueryAlike)).source == .cache)
    }

    @Test func postBodiesArePartOfTheKeyAndThePredicateDecidesWhatIsStored() async throws {
        // httpbin echoes the JSON body under "json": only answers whose code is 0 are stored.
        var onlySuccess = policy
        onlySuccess.shouldStore = { candidate in candidate.json?["json"]?["code"]?.int == 0 }
        let client = try CacheFixture.client(onlySuccess, base: TestServers.httpbin())
        let nonce = UUID().uuidString
        let good = Request<JSON>("anything", method: .post, body: .json(["code": 0, "nonce": nonce]))
        let bad = Request<JSON>("anything", method: .post, body: .json(["code": 1, "nonce": nonce]))
        #expect(try await client.send(good).source == .network)
        #expect(try await client.send(good).source == .cache)
        #expect(try await client.send(bad).source == .network)
        #expect(try await client.send(bad).source == .network, "code 1 was not stored")
        // The predicate sees the decoded value too.
        var byValue = policy
        byValue.shouldStore = { ($0.value as? JSON)?["json"]?["code"]?.int == 1 }
        let other = Request<JSON>("anything", method: .post, body: .json(["code": 1, "nonce": nonce + "v"])).caching(byValue)
        _ = try await client.send(other)
        #expect(try await client.send(other).source == .cache)
    }

    @Test func noStoreResponsesAreNeverStored() async throws {
        let key = Fixture.uniqueKey("nostore")
        let client = try CacheFixture.client(policy)
        _ = try await client.send(CacheFixture.resource(key, cacheControl: "no-store"))
        #expect(try await client.send(CacheFixture.resource(key, cacheControl: "no-store")).source == .network)
        #expect(try await CacheFixture.hits(key).all == 2)
    }

    @Test func uploadsAndOtherMethodsAreNeverCached() async throws {
        let client = try CacheFixture.client(policy, base: TestServers.httpbin())
        let upload = Request<JSON>("anything", method: .post, body: .data(Data("raw".utf8), contentType: "application/octet-stream"))
        _ = try await client.send(upload)
        #expect(try await client.send(upload).source == .network)
        let put = Request<JSON>("anything", method: .put, body: .json(["a": 1]))
        _ = try await client.send(put)
        #expect(try await client.send(put).source == .network)
    }

    @Test func clearingByRequestByURLAndEverything() async throws {
        let key = Fixture.uniqueKey("manage")
        let client = try CacheFixture.client(policy)
        let plain = CacheFixture.resource(key)
        var withQuery = plain
        withQuery.query["q"] = "other"
        _ = try await client.send(plain)
        _ = try await client.send(withQuery)
        _ = try await client.send(Request<JSON>("json", query: ["n": 2]))
        #expect(client.cacheSize > 0)
        client.removeCachedResponse(for: plain)
        #expect(try await client.send(plain).source == .network)
        #expect(client.removeCachedResponses(url: "cached") == 2, "every query of /cached")
        #expect(try await client.send(withQuery).source == .network)
        #expect(try await client.send(Request<JSON>("json", query: ["n": 2])).source == .cache)
        client.clearCache()
        #expect(client.cacheSize == 0)
        #expect(try await client.send(Request<JSON>("json", query: ["n": 2])).source == .network)
    }

    /// The client's disk level takes every TernCache setting: with an inline threshold of 0 even
    /// a small body is a file of its own (by default it stays inline, in SQLite).
    @Test func theDiskLevelTakesEveryTernCacheSetting() async throws {
        for threshold in [0, DiskCache.Configuration().inlineThreshold] {
            let directory = CacheFixture.directory()
            defer { try? FileManager.default.removeItem(at: directory) }
            let client = try CacheFixture.client(policy, directory: directory) { $0.cacheStorage.disk.inlineThreshold = threshold }
            #expect(client.configuration.cacheStorage.diskLimit == 100 << 20)  // the size limit stays as it was
            _ = try await client.send(CacheFixture.resource(Fixture.uniqueKey("inline-\(threshold)")))
            let data = directory.appendingPathComponent("data")
            let files: @Sendable () -> Int = { ((try? FileManager.default.contentsOfDirectory(atPath: data.path)) ?? []).count }
            if threshold == 0 {
                #expect(await eventually { files() > 0 }, "no value file with an inline threshold of 0")
            } else {
                try await Task.sleep(milliseconds: 100)
                #expect(files() == 0)
            }
        }
    }

    /// A disk cache opened by the app serves as the disk level of every client given it: what
    /// one client stored, another (with an empty memory level) reads; the configured directory
    /// and settings are not used.
    @Test func clientsShareAnInjectedDiskCache() async throws {
        let directory = CacheFixture.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DiskCache.open(directory)
        let ignored = CacheFixture.directory("ignored")
        let writer = try CacheFixture.client(policy, directory: ignored) { $0.cacheStorage.diskStore = store }
        let reader = try CacheFixture.client(policy, directory: ignored) { $0.cacheStorage.diskStore = store }
        let key = Fixture.uniqueKey("injected")
        #expect(try await writer.send(CacheFixture.resource(key)).source == .network)
        #expect(await eventually { (try? store.totalCount()) ?? 0 > 0 }, "the writer stored into the given cache")
        #expect(try await reader.send(CacheFixture.resource(key)).source == .cache)
        #expect(try await CacheFixture.hits(key).all == 1)
        #expect(reader.responseCache.directory == directory)
        #expect(!FileManager.default.fileExists(atPath: ignored.path), "the configured directory was opened")
    }

    @Test func theMemoryLevelTakesCountAndAgeLimits() async throws {
        let counted = try CacheFixture.client(policy) { $0.cacheStorage.memory = MemoryCacheSettings(countLimit: 2) }
        for index in 0..<4 { _ = try await counted.send(CacheFixture.resource(Fixture.uniqueKey("count-\(index)"))) }
        #expect(counted.responseCache.memory.count == 2)
        #expect(counted.configuration.cacheStorage.memoryLimit == 16 << 20)  // the size limit stays as it was
        // The age limit reaches the memory level (whose expiry TernCache's own tests time).
        let aged = try CacheFixture.client(policy) { $0.cacheStorage.memory.ageLimit = 90 }
        #expect(aged.responseCache.memory.ageLimit == 90 && counted.responseCache.memory.ageLimit == .infinity)
        for mistake in [MemoryCacheSettings(sizeLimit: -1), MemoryCacheSettings(countLimit: -1), MemoryCacheSettings(ageLimit: 0)] {
            let client = Client(baseURL: "http://127.0.0.1:9") { $0.cacheStorage.memory = mistake }
            #expect(client.configurationError?.description.contains("cacheStorage.memory.") == true)
        }
    }

    /// Memory and disk can be emptied apart: after `clearMemoryCache` the entry comes from disk
    /// (and is in memory again), after `clearDiskCache` from memory, after both from the network.
    @Test func memoryAndDiskAreClearedApart() async throws {
        let client = try CacheFixture.client(policy)
        let request = CacheFixture.resource(Fixture.uniqueKey("levels"))
        _ = try await client.send(request)
        let plan = try #require(client.cachePlan(for: request, try RequestBuilder.makeURLRequest(request, client: client), policy: policy))
        #expect(client.responseCache.memoryEntry(for: plan.key) != nil)
        client.clearMemoryCache()
        #expect(client.responseCache.memoryEntry(for: plan.key) == nil)
        #expect(try await client.send(request).source == .cache)  // from disk, back in memory
        #expect(client.responseCache.memoryEntry(for: plan.key) != nil)
        client.clearDiskCache()
        #expect(try await client.send(request).source == .cache)  // from memory
        client.clearMemoryCache()
        #expect(try await client.send(request).source == .network)
    }
}
