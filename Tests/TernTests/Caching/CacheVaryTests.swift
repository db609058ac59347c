import Foundation
import Testing

@testable import Tern

/// RFC 9111 §4.1 in every read mode: a response that varies is stored per variant and only
/// answers a request whose headers match the ones it was stored for; variants of one URL
/// coexist, in memory and on disk; `Vary: *` is never stored.
@Suite struct CacheVaryTests {
    static let reads = CachePolicy(read: .cacheElseNetwork, write: .both, maxAge: 300)

    static func varied(_ key: String, vary: String, headers: [String: String] = [:]) -> Request<JSON> {
        Request<JSON>("varied", query: ["key": key, "vary": vary], headers: headers).caching(reads)
    }

    @Test func variantsOfOneURLCoexistAndNeverCross() async throws {
        let key = Fixture.uniqueKey("vary")
        let directory = CacheFixture.directory()
        let client = try CacheFixture.client(directory: directory)
        let zh = Self.varied(key, vary: "Accept-Language", headers: ["Accept-Language": "zh"])
        let en = Self.varied(key, vary: "Accept-Language", headers: ["Accept-Language": "en"])
        #expect(try await client.send(zh).source == .network)
        #expect(try await client.send(en).source == .network, "another language is another variant")
        let zhAgain = try await client.send(zh), enAgain = try await client.send(en)
        #expect(zhAgain.source == .cache && zhAgain.json["seen"]?["accept-language"]?.string == "zh")
        #expect(enAgain.source == .cache && enAgain.json["seen"]?["accept-language"]?.string == "en")
        // No header is a variant of its own; spacing in a list does not make another.
        #expect(try await client.send(Self.varied(key, vary: "Accept-Language")).source == .network)
        let listed = Self.varied(key, vary: "Accept-Language", headers: ["Accept-Language": "en,  fr"])
        _ = try await client.send(listed)
        let spaced = try await client.send(Self.varied(key, vary: "Accept-Language", headers: ["Accept-Language": "en, fr"]))
        #expect(spaced.source == .cache)
        #expect(try await CacheFixture.hits(key).all == 4)
        // The next run reads both variants from disk.
        let nextRun = try CacheFixture.client(directory: directory)
        let fromDisk = try await nextRun.send(en)
        #expect(fromDisk.source == .cache && fromDisk.json["seen"]?["accept-language"]?.string == "en")
        #expect(try await nextRun.send(zh).json["seen"]?["accept-language"]?.string == "zh")
    }

    @Test func everyModeAndAnyHeaderAreMatched() async throws {
        let key = Fixture.uniqueKey("modes")
        let client = try CacheFixture.client()
        let v1 = Self.varied(key, vary: "X-API-Version, Accept", headers: ["X-API-Version": "1", "Accept": "application/json"])
        let v2 = Self.varied(key, vary: "X-API-Version, Accept", headers: ["X-API-Version": "2", "Accept": "application/json"])
        _ = try await client.send(v1)
        // Cache-only and cache-then-network see no entry for the other version.
        guard case .cacheMiss? = await client.completionResult(v2.caching(CachePolicy(read: .cacheOnly))).0.failure else {
            Issue.record("a cache-only read of another variant must miss")
            return
        }
        let then = await client.cachedAndFinal(v2.caching(CachePolicy(read: .cacheThenNetwork, write: .both)))
        #expect(then.hits.isEmpty)
        let both = await client.cachedAndFinal(v1.caching(CachePolicy(read: .cacheThenNetwork, write: .both)))
        #expect(both.hits.first?.json["seen"]?["x-api-version"]?.string == "1")
    }

    // The most common Vary of all, on a header the transport or Tern sets: still a hit.
    @Test func aResponseVaryingOnAcceptEncodingStillHits() async throws {
        let key = Fixture.uniqueKey("encoding")
        let client = try CacheFixture.client()
        _ = try await client.send(Self.varied(key, vary: "Accept-Encoding"))
        #expect(try await client.send(Self.varied(key, vary: "Accept-Encoding")).source == .cache)
        #expect(try await CacheFixture.hits(key).all == 1)
    }

    @Test func varyStarIsNeverStored() async throws {
        let key = Fixture.uniqueKey("star")
        let client = try CacheFixture.client()
        _ = try await client.send(Self.varied(key, vary: "*"))
        #expect(try await client.send(Self.varied(key, vary: "*")).source == .network)
        #expect(try await CacheFixture.hits(key).all == 2)
    }

    @Test func anEntryStoredWithVaryButNoVariantNeverMatches() throws {
        let url = URL(string: "https://api.example.com/news")!
        let http = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Vary": "Accept-Language"])!
        let key = CacheKey(text: "k", stored: "p-k")
        // What an older version stored: the response, its Vary, no variant.
        let legacy = CachedResponse(http, body: Data("old".utf8), key: key)
        #expect(!legacy.matches(["Accept-Language": "en"]))
        let metadata = Data(
            String(decoding: legacy.metadata, as: UTF8.self).replacingOccurrences(of: "tern-cache 3", with: "tern-cache 1")
                .replacingOccurrences(of: "\n-\n0\n", with: "\n").utf8)
        let read = try #require(CachedResponse(body: legacy.body, metadata: metadata))
        #expect(read.variant == nil && !read.matches([:]))
        // The current form keeps its variant through the disk.
        let variant = CacheVariant(names: ["accept-language"], requestHeaders: ["accept-language": "en"])
        let stored = CachedResponse(http, body: Data("new".utf8), key: key.variant(variant), variant: variant)
        let back = try #require(CachedResponse(body: stored.body, metadata: stored.metadata))
        #expect(back.variant == variant && back.matches(["Accept-Language": "en"]) && !back.matches(["Accept-Language": "zh"]))
    }
}
