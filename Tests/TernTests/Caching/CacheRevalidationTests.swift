import Foundation
import Testing
@testable import Tern

/// HTTP revalidation: ETag and Last-Modified validators, 304 mapped to the cached body.
@Suite struct CacheRevalidationTests {
    let expiring = CachePolicy(read: .cacheElseNetwork, write: .both, maxAge: 0.2)

    @Test func anExpiredEntryWithAnETagIsRevalidatedAndRefreshed() async throws {
        let key = Fixture.uniqueKey("etag")
        let refreshing = CachePolicy(read: .cacheElseNetwork, write: .both, maxAge: 0.5)
        let client = try CacheFixture.client(refreshing)
        let first = try await client.send(CacheFixture.resource(key, etag: "v1"))
        try await Task.sleep(milliseconds: 600)
        let refreshedAt = Date()  // the 304 refreshes the entry after this
        let revalidated = try await client.send(CacheFixture.resource(key, etag: "v1"))
        #expect(revalidated.source == .revalidated && revalidated.statusCode == 200)
        #expect(revalidated.data == first.data, "a 304 delivers the cached body")
        #expect(try await CacheFixture.hits(key) == (2, 1))
        // The 304 refreshed the entry: its stored time is the refresh's, whatever the machine's speed.
        let urlRequest = try RequestBuilder.makeURLRequest(CacheFixture.resource(key, etag: "v1"), client: client)
        let cacheKey = try #require(CacheKey(urlRequest, policy: refreshing))
        let storedAt = try #require(client.responseCache.memoryEntry(for: cacheKey)?.storedAt)
        #expect(storedAt >= refreshedAt.addingTimeInterval(-0.001))
    }

    @Test func aChangedResourceReplacesTheEntry() async throws {
        let key = Fixture.uniqueKey("changed")
        let client = try CacheFixture.client(expiring)
        _ = try await client.send(CacheFixture.resource(key, etag: "v1"))
        try await Task.sleep(milliseconds: 300)
        // The server's ETag is now v2: the conditional request gets a full 200.
        let changed = try await client.send(CacheFixture.resource(key, etag: "v2").caching(expiring))
        #expect(changed.source == .network && changed.json["n"]?.int == 2)
    }

    @Test func lastModifiedRevalidatesToo() async throws {
        let key = Fixture.uniqueKey("lm")
        let client = try CacheFixture.client(expiring)
        _ = try await client.send(CacheFixture.resource(key, lastModified: true))
        try await Task.sleep(milliseconds: 300)
        #expect(try await client.send(CacheFixture.resource(key, lastModified: true)).source == .revalidated)
        #expect(try await CacheFixture.hits(key).conditional == 1)
    }

    @Test func cacheThenNetworkRevalidatesTheEntryItShows() async throws {
        let key = Fixture.uniqueKey("then-etag")
        let client = try CacheFixture.client(CachePolicy(read: .cacheThenNetwork, write: .both))
        _ = try await client.send(CacheFixture.resource(key, etag: "same"))
        let (hits, result) = await client.cachedAndFinal(CacheFixture.resource(key, etag: "same"))
        #expect(hits.first?.source == .cache)
        #expect(try result.get().source == .revalidated)
        #expect(try await CacheFixture.hits(key) == (2, 1))
    }

    @Test func httpbinETagAndCacheEndpoints() async throws {
        let client = try CacheFixture.client(expiring, base: TestServers.httpbin())
        let etag = "tern-\(UUID().uuidString.prefix(8))"
        let first = try await client.send(Request<JSON>("etag/\(etag)"))
        #expect(first.source == .network && first.header("ETag")?.contains(etag) == true)
        try await Task.sleep(milliseconds: 300)
        let second = try await client.send(Request<JSON>("etag/\(etag)"))
        #expect(second.source == .revalidated && second.data == first.data)
        // httpbin's /cache answers 304 to any conditional request; its first answer has Last-Modified.
        let cache = try await client.send(Request<JSON>("cache"))
        #expect(cache.header("Last-Modified") != nil)
        try await Task.sleep(milliseconds: 300)
        #expect(try await client.send(Request<JSON>("cache")).source == .revalidated)
    }
}
