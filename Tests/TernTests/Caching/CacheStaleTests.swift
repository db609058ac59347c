import Foundation
import Testing
@testable import Tern

/// Stale entries under `CachePolicy.http`: `stale-while-revalidate` and `stale-if-error` (RFC
/// 5861), `must-revalidate` (RFC 9111 §5.2.2.2), and concurrent revalidations of one entry.
@Suite struct CacheStaleTests {
    static func resource(_ key: String, _ settings: [String: String], header: (String, String)? = nil) -> Request<JSON> {
        CacheStandardTests.resource(key, settings, header: header)
    }

    /// Waits until `/cached?key=K` has received `count` requests, `conditional` of them
    /// conditional (counted once answered), for at most 10 s.
    static func awaitHits(_ key: String, _ count: Int, conditional: Int = 0) async throws -> (all: Int, conditional: Int) {
        for _ in 0..<200 {
            let hits = try await CacheFixture.hits(key)
            if hits.all >= count && hits.conditional >= conditional { return hits }
            try await Task.sleep(milliseconds: 50)
        }
        return try await CacheFixture.hits(key)
    }

    @Test func staleWhileRevalidateAnswersAtOnceAndRevalidatesOnceInTheBackground() async throws {
        let key = Fixture.uniqueKey("swr")
        var policy = CachePolicy.http
        policy.ignoredParameters = ["hold"]  // the held request below reads the entry the first one stored
        let client = try CacheFixture.client(policy)
        // Stale on arrival (100 s old, fresh for 10) but within its 600 s window.
        let settings = ["cc": "max-age=10, stale-while-revalidate=600", "date": "-100", "etag": "w"]
        _ = try await client.send(Self.resource(key, settings))
        // The server now holds its answers until released: every answer below comes while the
        // background revalidation is in flight, however slow the machine.
        let held = settings.merging(["hold": key]) { $1 }
        var answers: [Response<JSON>] = []
        for _ in 0..<5 { answers.append(try await client.send(Self.resource(key, held))) }
        #expect(answers.allSatisfy { $0.source == .stale && $0.json["n"]?.int == 1 })
        // Five stale answers, one background revalidation: received, not yet answered.
        #expect(try await Self.awaitHits(key, 2) == (2, 0))
        try await Fixture.release(key)
        // It ends with a 304 that renews the entry.
        #expect(try await Self.awaitHits(key, 2, conditional: 1) == (2, 1))
    }

    @Test func theBackgroundRevalidationStoresWhatItGets() async throws {
        let key = Fixture.uniqueKey("swr-store")
        let client = try CacheFixture.client(.http)
        // No validator: the background request fetches the whole response again and stores it.
        let settings = ["cc": "max-age=0, stale-while-revalidate=600"]
        _ = try await client.send(Self.resource(key, settings))
        #expect(try await client.send(Self.resource(key, settings)).json["n"]?.int == 1)
        _ = try await Self.awaitHits(key, 2)
        var latest = 1
        for _ in 0..<40 where latest < 2 {
            try await Task.sleep(milliseconds: 50)
            latest = try await client.send(Self.resource(key, settings)).json["n"]?.int ?? 0
        }
        #expect(latest >= 2, "a later request sees the response the background revalidation stored")
    }

    @Test func staleIfErrorAnswersWhenTheServerFailsWithinItsWindow() async throws {
        let key = Fixture.uniqueKey("sie")
        let client = try CacheFixture.client(.http)
        let settings = ["cc": "max-age=0, stale-if-error=600"]
        _ = try await client.send(Self.resource(key, settings))
        try await CacheFixture.setState(key, "503")
        let stale = try await client.send(Self.resource(key, settings))
        #expect(stale.source == .stale && stale.json["n"]?.int == 1)
        try await CacheFixture.setState(key, "reset")
        #expect(try await client.send(Self.resource(key, settings)).source == .stale)
        try await CacheFixture.setState(key, "up")
        #expect(try await client.send(Self.resource(key, settings)).source == .network)
    }

    @Test func pastItsWindowTheErrorIsDelivered() async throws {
        let key = Fixture.uniqueKey("sie-past")
        let client = try CacheFixture.client(.http)
        let settings = ["cc": "max-age=10, stale-if-error=50", "date": "-100", "etag": "p"]
        _ = try await client.send(Self.resource(key, settings))
        try await CacheFixture.setState(key, "503")
        #expect(await client.completionResult(Self.resource(key, settings)).0.failure?.statusCode == 503)
        // The request may widen the window itself.
        let widened = Self.resource(key, settings, header: ("Cache-Control", "stale-if-error=3600"))
        #expect(try await client.send(widened).source == .stale)
    }

    @Test func mustRevalidateNeverAnswersStaleEvenWhenTheAppAsks() async throws {
        let key = Fixture.uniqueKey("must-revalidate")
        var policy = CachePolicy.http
        policy.servesStaleOnError = true
        let client = try CacheFixture.client(policy)
        let settings = ["cc": "max-age=0, must-revalidate, stale-if-error=600", "etag": "m"]
        _ = try await client.send(Self.resource(key, settings))
        try await CacheFixture.setState(key, "503")
        #expect(await client.completionResult(Self.resource(key, settings)).0.failure?.statusCode == 503)
        // Without must-revalidate, the app's servesStaleOnError answers however old the entry.
        let plain = Fixture.uniqueKey("serves-stale")
        _ = try await client.send(Self.resource(plain, ["cc": "max-age=0", "etag": "m"]))
        try await CacheFixture.setState(plain, "503")
        #expect(try await client.send(Self.resource(plain, ["cc": "max-age=0", "etag": "m"])).source == .stale)
    }

    @Test func concurrentRevalidationsOfOneEntryMakeOneExchange() async throws {
        let key = Fixture.uniqueKey("one-revalidation")
        var policy = CachePolicy.http
        policy.ignoredParameters = ["hold"]
        let client = try CacheFixture.client(policy)
        let settings = ["cc": "max-age=0", "etag": "c"]
        _ = try await client.send(Self.resource(key, settings))
        // The server holds the revalidation until every request has had time to join it.
        let held = Self.resource(key, settings.merging(["hold": key]) { $1 })
        let sources = try await withThrowingTaskGroup(of: ResponseSource.self) { group in
            for _ in 0..<4 { group.addTask { try await client.send(held).source } }
            _ = try await Self.awaitHits(key, 2)
            try await Task.sleep(milliseconds: 1_000)
            try await Fixture.release(key)
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(sources == Array(repeating: .revalidated, count: 4))
        #expect(try await CacheFixture.hits(key) == (2, 1))
    }

    @Test func appDecidedFreshnessIgnoresTheServersDirectives() async throws {
        let key = Fixture.uniqueKey("app-mode")
        let client = try CacheFixture.client(CachePolicy(read: .cacheElseNetwork, write: .both, maxAge: 60))
        let settings = ["cc": "max-age=0, no-cache, must-revalidate", "etag": "x"]
        _ = try await client.send(Self.resource(key, settings))
        #expect(try await client.send(Self.resource(key, settings)).source == .cache)
        #expect(try await CacheFixture.hits(key) == (1, 0))
    }
}
