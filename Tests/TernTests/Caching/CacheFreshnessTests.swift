import Foundation
import Testing
@testable import Tern

/// The pieces of server-decided freshness on their own: HTTP dates, `Cache-Control` directives,
/// the lifetime and age of a stored response (RFC 9111 §4.2), and how an entry may serve.
@Suite struct CacheFreshnessTests {
    static let url = URL(string: "https://api.example.com/forecast")!
    static let epoch = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

    static func freshness(
        _ headers: [String: String], url: URL = url, received: Date = epoch, duration: TimeInterval = 0
    )
        -> ServerFreshness
    {
        ServerFreshness(headers: headers, url: url, status: 200, received: received, exchangeDuration: duration)
    }

    // MARK: RFC 9110 §5.6.7: dates

    @Test func theThreeDateFormsParse() {
        for text in ["Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994"] {
            #expect(HTTPDate.parse(text) == Self.epoch, "\(text)")
        }
        #expect(HTTPDate.parse("Thu, 29 Feb 2024 23:59:60 GMT")?.timeIntervalSince1970 == 1_709_251_200)
        #expect(HTTPDate.parse("Wed, 21 Oct 2015 07:28:00 GMT")?.timeIntervalSince1970 == 1_445_412_480)
    }

    @Test func whatIsNotADateIsNil() {
        for text in [
            "", "0", "-1", "yesterday", "Sun, 06 Nov 1994 08:49 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
            "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 25:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 PST",
        ] {
            #expect(HTTPDate.parse(text) == nil, "\(text)")
        }
    }

    // MARK: RFC 9111 §5.2: directives

    @Test func directivesAreReadCaseInsensitivelyWithQuotedArguments() {
        let directives = CacheDirectives(#"Max-Age="60", no-cache="Set-Cookie, X-Id", MUST-REVALIDATE, stale-if-error=300"#)
        #expect(directives.maxAge == 60 && directives.noCache && directives.mustRevalidate && directives.staleIfError == 300)
        #expect(!directives.noStore && directives.staleWhileRevalidate == nil)
    }

    @Test func theFirstOfARepeatedDirectiveCountsAndInvalidNumbersAreStale() {
        #expect(CacheDirectives("max-age=10, max-age=99999").maxAge == 10)
        #expect(CacheDirectives("max-age=ten").maxAge == 0)
        #expect(CacheDirectives("max-age=-5").maxAge == 0)
        #expect(CacheDirectives("max-age=99999999999").maxAge == 2_147_483_648)
    }

    @Test func requestDirectives() {
        let any = CacheDirectives("max-stale, min-fresh=5, only-if-cached, no-store")
        #expect(any.maxStale == .infinity && any.minFresh == 5 && any.onlyIfCached && any.noStore)
        #expect(CacheDirectives("max-stale=30").maxStale == 30)
        #expect(CacheDirectives(nil) == .none)
    }

    // MARK: RFC 9111 §4.2.1–4.2.3: lifetime and age

    @Test func maxAgeWinsOverExpires() {
        let freshness = Self.freshness(["Cache-Control": "max-age=60", "Expires": "Sun, 06 Nov 1994 09:49:37 GMT"])
        #expect(freshness.lifetime == 60)
    }

    @Test func expiresCountsFromDateAndAnInvalidOneIsExpired() {
        let dated = ["Date": "Sun, 06 Nov 1994 08:49:37 GMT"]
        #expect(Self.freshness(dated.merging(["Expires": "Sun, 06 Nov 1994 09:49:37 GMT"]) { $1 }).lifetime == 3_600)
        #expect(Self.freshness(dated.merging(["Expires": "0"]) { $1 }).lifetime == 0)
        #expect(Self.freshness(dated.merging(["Expires": "Sun, 06 Nov 1994 07:49:37 GMT"]) { $1 }).lifetime == 0)
    }

    @Test func theHeuristicIsATenthOfTheLastModifiedAgeCappedAtADay() {
        let dated = ["Date": "Sun, 06 Nov 1994 08:49:37 GMT"]
        let tenHours = Self.freshness(dated.merging(["Last-Modified": "Sat, 05 Nov 1994 22:49:37 GMT"]) { $1 })
        #expect(tenHours.lifetime == 3_600)
        let years = Self.freshness(dated.merging(["Last-Modified": "Wed, 06 Nov 1991 08:49:37 GMT"]) { $1 })
        #expect(years.lifetime == ServerFreshness.heuristicLimit)
        // Not for a URL with a query, and never over an explicit lifetime.
        let query = URL(string: "https://api.example.com/forecast?city=chengdu")!
        #expect(Self.freshness(dated.merging(["Last-Modified": "Sat, 05 Nov 1994 22:49:37 GMT"]) { $1 }, url: query).lifetime == 0)
        #expect(Self.freshness(dated.merging(["Last-Modified": "Wed, 06 Nov 1991 08:49:37 GMT", "Expires": "0"]) { $1 }).lifetime == 0)
    }

    @Test func theInitialAgeIsTheLargerOfAgePlusTheExchangeAndTheApparentAge() {
        let received = Self.epoch.addingTimeInterval(100)
        let apparent = Self.freshness(["Date": "Sun, 06 Nov 1994 08:49:37 GMT", "Age": "30"], received: received, duration: 2)
        #expect(apparent.initialAge == 100)
        let aged = Self.freshness(["Date": "Sun, 06 Nov 1994 08:49:37 GMT", "Age": "300"], received: received, duration: 2)
        #expect(aged.initialAge == 302)
        // A Date ahead of the client's clock counts as no age, and the age grows while stored.
        let ahead = Self.freshness(["Date": "Sun, 06 Nov 1994 09:49:37 GMT"])
        #expect(ahead.initialAge == 0 && ahead.age(resident: 12) == 12)
    }

    @Test func anAgeIsOneDeltaSecondsValue() {
        for (value, age) in [("7200", 7_200.0), ("7200, 0", 7_200), ("0,7200", 0), ("-7200", 0), ("7200.0", 0), ("abc", 0)] {
            #expect(Self.freshness(["Age": value]).initialAge == age, "\(value)")
        }
    }

    @Test func theAgeOnArrivalSurvivesTheDisk() throws {
        let http = HTTPURLResponse(
            url: Self.url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Cache-Control": "max-age=600", "Age": "42"])!
        let entry = CachedResponse(http, body: Data("{}".utf8), key: CacheKey(text: "k", stored: "p-k"), exchangeDuration: 1.5)
        #expect(entry.freshness.initialAge == 43.5)
        let back = try #require(CachedResponse(body: entry.body, metadata: entry.metadata))
        #expect(back.freshness.initialAge == 43.5 && back.freshness.lifetime == 600)
    }

    // MARK: RFC 9111 §4.2, §5.2.1, RFC 5861: how an entry serves a request

    static func use(_ response: [String: String], request: [String: String] = [:], after seconds: TimeInterval = 0) -> CacheUse {
        let http = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: response)!
        let key = CacheKey(text: "k", stored: "p-k")
        let entry = CachedResponse(http, body: Data(), key: key, storedAt: epoch)
        let plan = CachePlan(
            policy: .http, key: key, cache: ResponseCache(directory: URL(fileURLWithPath: "/nonexistent"), memoryLimit: 1, diskLimit: 0),
            requestHeaders: request)
        return plan.use(of: entry, now: epoch.addingTimeInterval(seconds))
    }

    @Test func responseDirectivesDecideTheUse() {
        #expect(Self.use(["Cache-Control": "max-age=60"], after: 59) == .fresh)
        #expect(Self.use(["Cache-Control": "max-age=60"], after: 60) == .revalidate)
        #expect(Self.use(["Cache-Control": "max-age=60, no-cache"]) == .revalidate)
        #expect(Self.use(["Cache-Control": "max-age=60, stale-while-revalidate=30"], after: 80) == .stale(revalidate: true))
        #expect(Self.use(["Cache-Control": "max-age=60, stale-while-revalidate=30"], after: 91) == .revalidate)
        #expect(Self.use(["Cache-Control": "max-age=60, stale-while-revalidate=30, must-revalidate"], after: 80) == .revalidate)
    }

    @Test func requestDirectivesDecideTheUse() {
        let minute = ["Cache-Control": "max-age=60"]
        #expect(Self.use(minute, request: ["Cache-Control": "no-cache"]) == .revalidate)
        #expect(Self.use(minute, request: ["cache-control": "max-age=10"], after: 11) == .revalidate)
        #expect(Self.use(minute, request: ["Cache-Control": "max-age=10"], after: 9) == .fresh)
        #expect(Self.use(minute, request: ["Cache-Control": "min-fresh=20"], after: 45) == .revalidate)
        #expect(Self.use(minute, request: ["Cache-Control": "max-stale=30"], after: 80) == .stale(revalidate: false))
        #expect(Self.use(minute, request: ["Cache-Control": "max-stale"], after: 9_999) == .stale(revalidate: false))
        #expect(
            Self.use(
                minute.merging(["Cache-Control": "max-age=60, must-revalidate"]) { $1 }, request: ["Cache-Control": "max-stale"], after: 80)
                == .revalidate)
    }
}
