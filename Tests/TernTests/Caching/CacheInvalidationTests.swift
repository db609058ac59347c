import Foundation
import Testing

@testable import Tern

/// RFC 9111 §4.4: a successful unsafe request invalidates what the cache holds for its URL (every
/// entry of that path) and for the same-origin URLs in its `Location` and `Content-Location`, in
/// memory and on disk — an entry a previous run stored included; an error, a safe method, another
/// origin, or a POST the app caches as a read (its policy, or the client's, writes) invalidates
/// nothing.
@Suite struct CacheInvalidationTests {
    static let reads = CachePolicy(read: .cacheElseNetwork, write: .both, maxAge: 300)

    @Test func aSuccessfulDeleteInvalidatesItsURLInMemoryAndOnDisk() async throws {
        let key = Fixture.uniqueKey("delete")
        let directory = CacheFixture.directory()
        let client = try CacheFixture.client(Self.reads, directory: directory)
        _ = try await client.send(CacheFixture.resource(key))
        #expect(try await client.send(CacheFixture.resource(key)).source == .cache)
        _ = try await client.send(Request<Data>("cached", method: .delete, query: ["key": key]))
        let after = try await client.send(CacheFixture.resource(key))
        #expect(after.source == .network && after.json["n"]?.int == 2)

        // Stored on disk by one run; a later run's PUT, before any read, removes it there too.
        let disk = CachePolicy(read: .cacheElseNetwork, write: .disk, maxAge: 300)
        let writer = try CacheFixture.client(disk, directory: directory)
        _ = try await writer.send(CacheFixture.resource(key))
        let nextRun = try CacheFixture.client(.disabled, directory: directory)
        _ = try await nextRun.send(Request<Data>("cached", method: .put, query: ["key": key], body: .json(["n": 1])))
        let reader = try CacheFixture.client(disk, directory: directory)
        #expect(try await reader.send(CacheFixture.resource(key)).source == .network)
    }

    @Test func locationAndContentLocationOnTheSameOriginAreInvalidated() async throws {
        let key = Fixture.uniqueKey("location")
        let client = try CacheFixture.client()
        let base = try TestServers.fixture()
        _ = try await client.send(CacheFixture.resource(key).caching(Self.reads))
        // Another origin (a name for the same server): nothing is invalidated.
        let elsewhere = base.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/cached?key=\(key)"
        _ = try await client.send(Request<Data>("changes", method: .post, query: ["location": elsewhere]))
        #expect(try await client.send(CacheFixture.resource(key).caching(Self.reads)).source == .cache)
        // An error answer invalidates nothing either.
        let failed = await client.completionResult(
            Request<Data>("changes", method: .post, query: ["status": 409, "location": "/cached?key=\(key)"])
        ).0
        #expect(failed.failure != nil)
        #expect(try await client.send(CacheFixture.resource(key).caching(Self.reads)).source == .cache)
        _ = try await client.send(Request<Data>("changes", method: .post, query: ["content_location": "/cached?key=\(key)"]))
        #expect(try await client.send(CacheFixture.resource(key).caching(Self.reads)).source == .network)
        _ = try await client.send(Request<Data>("changes", method: .patch, query: ["location": "cached?key=\(key)"]))
        #expect(try await client.send(CacheFixture.resource(key).caching(Self.reads)).source == .network, "a relative Location too")
    }

    /// The answer's status and the method decide, not what the app makes of the answer: a 303
    /// the request does not follow fails it, a 2xx that does not decode fails it, and both
    /// invalidate.
    @Test func aChangeInvalidatesEvenWhenTheAppRejectsItsAnswer() async throws {
        let key = Fixture.uniqueKey("rejected")
        let client = try CacheFixture.client()
        _ = try await client.send(CacheFixture.resource(key).caching(Self.reads))
        var unfollowed = Request<Data>("changes", method: .post, query: ["status": 303, "location": "/cached?key=\(key)"])
        unfollowed.redirectPolicy = .never
        let refused = await client.completionResult(unfollowed).0
        guard case .failure(.unacceptableStatus(303, _, _, _)) = refused else {
            Issue.record("got \(refused)")
            return
        }
        #expect(try await client.send(CacheFixture.resource(key).caching(Self.reads)).source == .network)

        #expect(try await client.send(CacheFixture.resource(key).caching(Self.reads)).source == .cache)
        let undecodable = Request<[Int]>("changes", method: .post, query: ["content_location": "/cached?key=\(key)"])
        guard case .failure(.decoding) = await client.completionResult(undecodable).0 else {
            Issue.record("a body that is not [Int] decoded")
            return
        }
        #expect(try await client.send(CacheFixture.resource(key).caching(Self.reads)).source == .network)
    }

    @Test func aCachedPostIsAReadAndSafeMethodsInvalidateNothing() async throws {
        let key = Fixture.uniqueKey("read")
        let client = try CacheFixture.client()
        _ = try await client.send(CacheFixture.resource(key).caching(Self.reads))
        // An API answering queries over POST, cached by its policy: a read, not a change.
        _ = try await client.send(Request<Data>("cached", method: .post, query: ["key": key]).caching(Self.reads))
        _ = try await client.send(Request<Data>("cached", method: .head, query: ["key": key]))
        #expect(try await client.send(CacheFixture.resource(key).caching(Self.reads)).source == .cache)
        #expect(try await CacheFixture.hits(key).all == 1)
    }

    @Test func whichURLsAChangeMakesStale() throws {
        let target = URL(string: "https://api.example.com/items/5")!
        func response(_ status: Int, _ headers: [String: String] = [:]) -> HTTPURLResponse {
            HTTPURLResponse(url: target, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)!
        }
        let urls = { (method: HTTPMethod, response: HTTPURLResponse, stores: Bool) in
            CacheInvalidation.urls(method: method, target: target, response: ResponseHead(response), storesResponse: stores).map(
                \.absoluteString)
        }
        #expect(urls(.delete, response(204), false) == ["https://api.example.com/items/5"])
        #expect(urls(.get, response(200), false).isEmpty && urls(.delete, response(404), false).isEmpty)
        #expect(urls(.post, response(200), true).isEmpty, "a POST the app caches is a read")
        let moved = response(201, ["Location": "/items/6", "Content-Location": "https://other.example.com/items/6"])
        #expect(urls(.post, moved, false) == ["https://api.example.com/items/5", "https://api.example.com/items/6"])
        let port = response(303, ["Location": "https://api.example.com:8443/items/6"])
        #expect(urls(.put, port, false) == ["https://api.example.com/items/5"])
    }
}
