import Foundation
import Testing
@testable import Tern

/// `CachePolicy.http`: freshness as the server says (RFC 9111 §4.2), the request's own
/// directives (§5.2.1) and what is stored (§3), through the fixture server's exact headers.
@Suite struct CacheStandardTests {
    /// `/cached` for `key` with fixture settings (`cc`, `etag`, `age`, `date`, `expires`, `lmago`).
    static func resource(_ key: String, _ settings: [String: String] = [:], header: (String, String)? = nil) -> Request<JSON> {
        var query: Parameters = ["key": key]
        for (name, value) in settings { query[name] = value }
        var request = Request<JSON>("cached", query: query)
        if let (name, value) = header { request.headers[name] = value }
        return request
    }

    // MARK: §4.2.1 Freshness lifetime

    @Test func maxAgeAnswersFromTheCacheWithoutTheNetwork() async throws {
        let key = Fixture.uniqueKey("max-age")
        let client = try CacheFixture.client(.http)
        let first = try await client.send(Self.resource(key, ["cc": "max-age=60"]))
        let second = try await client.send(Self.resource(key, ["cc": "max-age=60"]))
        #expect(first.source == .network && second.source == .cache && second.json["n"]?.int == 1)
        #expect(try await CacheFixture.hits(key).all == 1)
    }

    @Test func expiresCountsFromDateAndAnInvalidOneIsAlreadyStale() async throws {
        let key = Fixture.uniqueKey("expires")
        let client = try CacheFixture.client(.http)
        _ = try await client.send(Self.resource(key, ["expires": "60"]))
        #expect(try await client.send(Self.resource(key, ["expires": "60"])).source == .cache)
        let invalid = Fixture.uniqueKey("expires-0")
        _ = try await client.send(Self.resource(invalid, ["expires": "raw:0", "etag": "e"]))
        #expect(try await client.send(Self.resource(invalid, ["expires": "raw:0", "etag": "e"])).source == .revalidated)
        #expect(try await CacheFixture.hits(invalid) == (2, 1))
    }

    @Test func aResponseWithNoFreshnessAndNoValidatorIsNotStored() async throws {
        let key = Fixture.uniqueKey("plain")
        let client = try CacheFixture.client(.http)
        _ = try await client.send(Self.resource(key))
        #expect(try await client.send(Self.resource(key)).source == .network)
        // Nothing for `max-stale` to reach either, as the article says.
        #expect(try await client.send(Self.resource(key, header: ("Cache-Control", "max-stale=60"))).source == .network)
        #expect(try await CacheFixture.hits(key) == (3, 0))
        #expect(client.cacheSize == 0)
    }

    // MARK: §4.2.3 Age

    @Test func anAgeFromUpstreamUsesUpTheLifetime() async throws {
        let key = Fixture.uniqueKey("age")
        let client = try CacheFixture.client(.http)
        let settings = ["cc": "max-age=60", "age": "100", "etag": "a"]
        _ = try await client.send(Self.resource(key, settings))
        #expect(try await client.send(Self.resource(key, settings)).source == .revalidated)
        #expect(try await CacheFixture.hits(key) == (2, 1))
    }

    /// RFC 9111 §4: a stored response used without validation carries its current age, in place
    /// of the `Age` it arrived with — from memory and from disk, whether the server or the app
    /// decides freshness.
    @Test func aHitCarriesItsCurrentAge() async throws {
        func ages(_ response: Response<JSON>) -> [Int] {
            response.head.headerFields.filter { ResponseHead.sameName($0.key, "Age") }.compactMap { Int($0.value) }
        }
        let key = Fixture.uniqueKey("age-header")
        let directory = CacheFixture.directory()
        let settings = ["cc": "max-age=600", "age": "100"]
        let first = try await CacheFixture.client(.http, directory: directory).send(Self.resource(key, settings))
        #expect(first.source == .network && ages(first) == [100])
        try await Task.sleep(nanoseconds: 1_100_000_000)
        let client = try CacheFixture.client(.http, directory: directory)
        let fromDisk = try await client.send(Self.resource(key, settings))
        let fromMemory = try await client.send(Self.resource(key, settings))
        for hit in [fromDisk, fromMemory] {
            #expect(hit.source == .cache)
            // At least the 100 s it arrived with plus the second slept; a loaded pass adds more.
            #expect(ages(hit).count == 1 && (101...200).contains(ages(hit).first ?? 0), "\(ages(hit))")
        }

        let appKey = Fixture.uniqueKey("age-app")
        let app = try CacheFixture.client(CachePolicy(read: .cacheElseNetwork, write: .memory, maxAge: 300))
        _ = try await app.send(CacheFixture.resource(appKey))
        try await Task.sleep(nanoseconds: 1_100_000_000)
        let appHit = try await app.send(CacheFixture.resource(appKey))
        #expect(appHit.source == .cache && (1...100).contains(ages(appHit).first ?? 0), "\(ages(appHit))")
    }

    /// RFC 9111 §4.3.4: a 304's headers replace the stored ones, so a new `Cache-Control` on the
    /// 304 makes the entry fresh for the requests after it.
    @Test func aNotModifiedAnswersNewHeadersAreMergedIntoTheEntry() async throws {
        let key = Fixture.uniqueKey("merge-304")
        let client = try CacheFixture.client(.http)
        let settings = ["cc": "no-cache", "etag": "v1", "cc304": "max-age=60"]
        #expect(try await client.send(Self.resource(key, settings)).source == .network)
        let revalidated = try await client.send(Self.resource(key, settings))
        #expect(revalidated.source == .revalidated && revalidated.header("Cache-Control") == "max-age=60")
        #expect(try await client.send(Self.resource(key, settings)).source == .cache)
        #expect(try await CacheFixture.hits(key) == (2, 1))
    }

    @Test func aDateInThePastCountsAsAge() async throws {
        let key = Fixture.uniqueKey("date")
        let client = try CacheFixture.client(.http)
        let settings = ["cc": "max-age=60", "date": "-100", "etag": "d"]
        _ = try await client.send(Self.resource(key, settings))
        #expect(try await client.send(Self.resource(key, settings)).source == .revalidated)
    }

    // MARK: §4.2.2 Heuristic freshness

    @Test func lastModifiedGivesATenthOfItsAgeToAURLWithoutAQuery() async throws {
        let key = Fixture.uniqueKey("heuristic")
        let client = try CacheFixture.client(.http)
        let document = Request<JSON>("documents/\(key)/lmago=36000")
        _ = try await client.send(document)
        #expect(try await client.send(document).source == .cache)
        // The same response under a URL with a query gets no heuristic lifetime: it is revalidated.
        let queried = Fixture.uniqueKey("heuristic-query")
        _ = try await client.send(Self.resource(queried, ["lmago": "36000"]))
        #expect(try await client.send(Self.resource(queried, ["lmago": "36000"])).source == .revalidated)
    }

    // MARK: §4.3, §5.2.2 Revalidation the response asks for

    @Test func noCacheInTheResponseRevalidatesEveryUse() async throws {
        let key = Fixture.uniqueKey("no-cache")
        let client = try CacheFixture.client(.http)
        let settings = ["cc": "max-age=600, no-cache", "etag": "n"]
        _ = try await client.send(Self.resource(key, settings))
        #expect(try await client.send(Self.resource(key, settings)).source == .revalidated)
        #expect(try await client.send(Self.resource(key, settings)).source == .revalidated)
        #expect(try await CacheFixture.hits(key) == (3, 2))
    }

    @Test func aNotModifiedAnswerRenewsTheEntry() async throws {
        let key = Fixture.uniqueKey("renew")
        var policy = CachePolicy.http
        policy.ignoredParameters = ["age"]  // the request below reads the entry the first one stored
        let client = try CacheFixture.client(policy)
        // Stale on arrival (an Age of 100 against a max-age of 60), with a validator.
        _ = try await client.send(Self.resource(key, ["cc": "max-age=60", "etag": "r", "age": "100"]))
        // The 304 (no Age this time) renews the entry: fresh for a minute, whatever the machine's pace.
        let settings = ["cc": "max-age=60", "etag": "r"]
        #expect(try await client.send(Self.resource(key, settings)).source == .revalidated)
        #expect(try await client.send(Self.resource(key, settings)).source == .cache)
        #expect(try await CacheFixture.hits(key) == (2, 1))
    }

    // MARK: §5.2.1 Request directives

    @Test func requestNoCacheAndMaxAgeZeroRevalidate() async throws {
        let key = Fixture.uniqueKey("request-no-cache")
        let client = try CacheFixture.client(.http)
        let settings = ["cc": "max-age=600", "etag": "q"]
        _ = try await client.send(Self.resource(key, settings))
        #expect(try await client.send(Self.resource(key, settings, header: ("Cache-Control", "no-cache"))).source == .revalidated)
        #expect(try await client.send(Self.resource(key, settings, header: ("Cache-Control", "max-age=0"))).source == .revalidated)
        #expect(try await client.send(Self.resource(key, settings)).source == .cache)
        #expect(try await CacheFixture.hits(key) == (3, 2))
    }

    @Test func anEntryARequestRefusedStaysWhileItIsFresh() async throws {
        let key = Fixture.uniqueKey("refused")
        let client = try CacheFixture.client(.http)
        _ = try await client.send(Self.resource(key, ["cc": "max-age=600"]))
        // This request wants a new answer and keeps none: the fresh entry is not its to drop.
        let refusing = Self.resource(key, ["cc": "max-age=600"], header: ("Cache-Control", "no-cache, no-store"))
        #expect(try await client.send(refusing).source == .network)
        let later = try await client.send(Self.resource(key, ["cc": "max-age=600"]))
        #expect(later.source == .cache && later.json["n"]?.int == 1)
    }

    @Test func requestMaxStaleAcceptsAStaleEntry() async throws {
        let key = Fixture.uniqueKey("max-stale")
        let client = try CacheFixture.client(.http)
        let settings = ["cc": "max-age=10", "date": "-100", "etag": "s"]
        _ = try await client.send(Self.resource(key, settings))
        let stale = try await client.send(Self.resource(key, settings, header: ("Cache-Control", "max-stale=3600")))
        #expect(stale.source == .stale && stale.json["n"]?.int == 1)
        #expect(try await client.send(Self.resource(key, settings, header: ("Cache-Control", "max-stale=5"))).source == .revalidated)
    }

    @Test func onlyIfCachedNeverGoesToTheNetwork() async throws {
        let key = Fixture.uniqueKey("only-if-cached")
        let client = try CacheFixture.client(.http)
        let onlyCached = Self.resource(key, ["cc": "max-age=60"], header: ("Cache-Control", "only-if-cached"))
        guard case .cacheMiss? = await client.completionResult(onlyCached).0.failure else {
            Issue.record("only-if-cached without an entry must be TernError.cacheMiss"); return
        }
        #expect(try await CacheFixture.hits(key).all == 0)
        _ = try await client.send(Self.resource(key, ["cc": "max-age=60"]))
        #expect(try await client.send(onlyCached).source == .cache)
    }

    @Test func requestNoStoreIsNotStored() async throws {
        let key = Fixture.uniqueKey("request-no-store")
        let client = try CacheFixture.client(.http)
        _ = try await client.send(Self.resource(key, ["cc": "max-age=60"], header: ("Cache-Control", "no-store")))
        #expect(try await client.send(Self.resource(key, ["cc": "max-age=60"])).source == .network)
    }

    // MARK: §3 Storing

    @Test func responseNoStoreIsNotStored() async throws {
        let key = Fixture.uniqueKey("no-store")
        let client = try CacheFixture.client(.http)
        _ = try await client.send(Self.resource(key, ["cc": "no-store, max-age=60"]))
        #expect(try await client.send(Self.resource(key, ["cc": "no-store, max-age=60"])).source == .network)
    }

    @Test func aPrivateCacheStoresAuthorizedAndPrivateResponses() async throws {
        let key = Fixture.uniqueKey("authorized")
        let client = try CacheFixture.client(.http)
        let request = Self.resource(key, ["cc": "private, max-age=60"], header: ("Authorization", "Bearer t"))
        _ = try await client.send(request)
        #expect(try await client.send(request).source == .cache)
    }

    @Test func onlyGetAndHeadAreStoredWhenTheServerDecides() async throws {
        let key = Fixture.uniqueKey("post")
        let client = try CacheFixture.client(.http)
        var post = Self.resource(key, ["cc": "max-age=60"])
        post.method = .post
        _ = try await client.send(post)
        #expect(try await client.send(post).source == .network)
        #expect(client.cacheSize == 0)
    }

    @Test func aServerFreshEntrySurvivesARestart() async throws {
        let key = Fixture.uniqueKey("restart")
        let directory = CacheFixture.directory()
        _ = try await CacheFixture.client(.http, directory: directory).send(Self.resource(key, ["cc": "max-age=60", "age": "10"]))
        let restarted = try CacheFixture.client(.http, directory: directory)
        #expect(try await restarted.send(Self.resource(key, ["cc": "max-age=60", "age": "10"])).source == .cache)
        // The age it arrived with still counts: a request that wants at most 5 s old revalidates.
        let young = Self.resource(key, ["cc": "max-age=60", "age": "10"], header: ("Cache-Control", "max-age=5"))
        #expect(try await restarted.send(young).source == .network)
    }
}
