import Foundation
import Testing
@testable import Tern

/// Small deterministic checks of promises that other tests only reached by chance: each fails
/// when its one line of the engine or the cache is broken.
@Suite struct ContractTests {
    private func cacheKey(_ body: String, type: String, ignoring ignored: Set<String>) -> CacheKey? {
        var request = URLRequest(url: URL(string: "https://api.test/search?lang=zh&ts=9")!)
        request.httpMethod = "POST"
        request.httpBody = Data(body.utf8)
        request.setValue(type, forHTTPHeaderField: "Content-Type")
        return CacheKey(request, policy: CachePolicy(write: .memory, ignoredParameters: ignored))
    }

    @Test func ignoredParametersDoNotCountInFormOrJSONBodies() {
        let form = "application/x-www-form-urlencoded; charset=utf-8"
        #expect(cacheKey("city=bj&ts=1", type: form, ignoring: ["ts"]) == cacheKey("ts=2&city=bj", type: form, ignoring: ["ts"]))
        #expect(cacheKey("city=bj&ts=1", type: form, ignoring: ["ts"]) != cacheKey("city=sh&ts=1", type: form, ignoring: ["ts"]))
        #expect(cacheKey("city=bj&ts=1", type: form, ignoring: []) != cacheKey("city=bj&ts=2", type: form, ignoring: []))
        let json = "application/json"
        #expect(
            cacheKey(#"{"city":"bj","ts":1}"#, type: json, ignoring: ["ts"])
                == cacheKey(#"{"ts":2,"city":"bj"}"#, type: json, ignoring: ["ts"]))
        #expect(
            cacheKey(#"{"city":"bj","ts":1}"#, type: json, ignoring: ["ts"])
                != cacheKey(#"{"city":"sh","ts":1}"#, type: json, ignoring: ["ts"]))
    }

    @Test func identityCountsTheBodyAndTheCredentials() {
        func identity(_ body: String, authorization: String = "a") -> RequestIdentity {
            var request = URLRequest(url: URL(string: "https://api.test/echo")!)
            request.httpMethod = "POST"
            request.httpBody = Data(body.utf8)
            request.setValue(authorization, forHTTPHeaderField: "Authorization")
            request.setValue("t", forHTTPHeaderField: "X-Trace")
            return RequestIdentity(request)
        }
        #expect(identity("x") == identity("x"))
        #expect(identity("x") != identity("y"))
        #expect(identity("x", authorization: "Bearer alice") != identity("x", authorization: "Bearer bob"))
    }

    @Test(arguments: [RepeatStrategy.share, .cancelOlder])
    func postsWithDifferentBodiesNeitherShareNorCancelEachOther(strategy: RepeatStrategy) async throws {
        let client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
        async let first = client.send(Request<JSON>("echo", method: .post, body: .json(["who": "first"])).repeating(strategy))
        async let second = client.send(Request<JSON>("echo", method: .post, body: .json(["who": "second"])).repeating(strategy))
        let (a, b) = try await (first, second)
        #expect(a.json["body"]?.string?.contains("first") == true)
        #expect(b.json["body"]?.string?.contains("second") == true)
    }

    @Test func sharedCallsNeverCrossCredentials() async throws {
        let client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
        func whoAmI(_ user: String) -> Request<JSON> {
            Request<JSON>("echo", headers: ["Authorization": "Bearer \(user)"]).repeating(.share)
        }
        async let alice = client.send(whoAmI("alice"))
        async let bob = client.send(whoAmI("bob"))
        let (a, b) = try await (alice, bob)
        #expect(a.json["headers"]?["Authorization"]?.string == "Bearer alice")
        #expect(b.json["headers"]?["Authorization"]?.string == "Bearer bob")
    }

    private func plan(servingStale: Bool = true) throws -> (CachePlan, CachedResponse) {
        let cache = ResponseCache(directory: CacheFixture.directory(), memoryLimit: 1 << 20, diskLimit: 1 << 20)
        let policy = CachePolicy(read: .cacheElseNetwork, write: .memory, servesStaleOnError: servingStale)
        let key = try #require(CacheKey(URLRequest(url: URL(string: "https://api.test/a")!), policy: policy))
        let http = try #require(
            HTTPURLResponse(url: URL(string: "https://api.test/a")!, statusCode: 200, httpVersion: nil, headerFields: [:]))
        let entry = CachedResponse(http, body: Data("cached".utf8), key: key, storedAt: Date(timeIntervalSinceNow: -3600))
        cache.store(entry, for: key, in: .memory)
        let plan = CachePlan(policy: policy, key: key, cache: cache)
        plan.remember(entry)
        return (plan, entry)
    }

    private func network(_ status: Int) -> Result<RawResponse, TernError> {
        .success(
            RawResponse(
                head: ResponseHead(url: URL(string: "https://api.test/a")!, statusCode: status, headerFields: [:]),
                data: Data("net".utf8)))
    }

    @Test func aStaleEntryReplacesOnlyTransportErrorsTimeoutsAnd5xx() throws {
        let (plan, _) = try plan()
        for status in [400, 401, 404, 429] {
            let resolved = plan.resolve(network(status))
            #expect(resolved.success?.source == .network, "a \(status) must reach the caller")
            #expect(resolved.success?.response.statusCode == status)
        }
        #expect(plan.resolve(network(503)).success?.source == .stale)
        #expect(plan.resolve(.failure(.transport(URLError(.networkConnectionLost)))).success?.source == .stale)
        #expect(plan.resolve(.failure(.timedOut(after: 1))).success?.source == .stale)
        #expect(plan.resolve(.failure(.cancelled(.explicit))).failure == .cancelled(.explicit))
        #expect(try self.plan(servingStale: false).0.resolve(network(503)).success?.source == .network)
    }

    @Test func aReadChecksTheStoredKeyTextSoACollisionIsAMiss() throws {
        let directory = CacheFixture.directory()
        let cache = ResponseCache(directory: directory, memoryLimit: 1 << 20, diskLimit: 1 << 20)
        let policy = CachePolicy(write: [.memory, .disk])
        let asked = try #require(CacheKey(URLRequest(url: URL(string: "https://api.test/a")!), policy: policy))
        let other = try #require(CacheKey(URLRequest(url: URL(string: "https://api.test/b")!), policy: policy))
        let http = try #require(
            HTTPURLResponse(url: URL(string: "https://api.test/b")!, statusCode: 200, httpVersion: nil, headerFields: [:]))
        // Another request's entry stored under the asked key's hash: what a collision looks like.
        cache.store(CachedResponse(http, body: Data("b".utf8), key: other), for: asked, in: [.memory, .disk])
        #expect(cache.memoryEntry(for: asked) == nil)
        #expect(cache.diskEntry(for: asked) == nil)
    }

    @Test func aCachedResponseIsNeverDeliveredAfterACancel() async throws {
        let directory = CacheFixture.directory()
        let key = Fixture.uniqueKey("cancel-read")
        let policy = CachePolicy(read: .cacheElseNetwork, write: [.memory, .disk], maxAge: 600)
        _ = try await CacheFixture.client(policy, directory: directory).send(CacheFixture.resource(key))
        // A new client on the same directory: its memory is empty, so the hit comes from a disk read.
        let queue = DispatchQueue(label: "held-callbacks")
        queue.suspend()
        let client = try CacheFixture.client(policy, directory: directory) { $0.callbackQueue = .queue(queue) }
        let outcomes = Outcomes()
        let handle = client.send(CacheFixture.resource(key)) { outcomes.record(0, $0) }
        handle.cancel()
        queue.resume()
        await outcomes.wait(for: 1)
        try await Task.sleep(milliseconds: 200)
        #expect(outcomes.of(0).map(\.failure) == [.cancelled(.explicit)])
    }

    @Test func aCacheHitLeavesTheDeadlineSchedulerAtOnce() async throws {
        let key = Fixture.uniqueKey("hit-deadline")
        let client = try CacheFixture.client(CachePolicy(read: .cacheElseNetwork, write: .memory, maxAge: 600))
        _ = try await client.send(CacheFixture.resource(key))
        let armed = Locked<Bool?>(nil)
        let box = Locked<RequestHandle?>(nil)
        let stored = DispatchSemaphore(value: 0)
        let response: Response<JSON> = try await withCheckedThrowingContinuation { continuation in
            let handle = client.send(CacheFixture.resource(key)) { result in
                _ = stored.wait(timeout: .now() + 5)
                armed.withLock { $0 = box.withLock { $0 }.map { DeadlineScheduler.shared.contains($0.id) } }
                continuation.resume(with: result)
            }
            box.withLock { $0 = handle }
            stored.signal()
        }
        #expect(response.source == .cache)
        #expect(armed.withLock { $0 } == false)
    }

    @Test func aNotModifiedAnswerRefreshesTheEntrysStoredTime() async throws {
        let key = Fixture.uniqueKey("refresh")
        let policy = CachePolicy(read: .cacheElseNetwork, write: .memory, maxAge: 600)
        let client = try CacheFixture.client(policy)
        let request = CacheFixture.resource(key, etag: "v1")
        let urlRequest = try RequestBuilder.makeURLRequest(request, client: client)
        let cacheKey = try #require(CacheKey(urlRequest, policy: policy))
        let http = try #require(
            HTTPURLResponse(
                url: urlRequest.url!, statusCode: 200, httpVersion: nil,
                headerFields: ["ETag": "\"v1\"", "Content-Type": "application/json"]))
        // An entry stored an hour ago: expired, but with a validator.
        client.responseCache.store(
            CachedResponse(
                http, body: Data(#"{"n": 0}"#.utf8), key: cacheKey,
                storedAt: Date(timeIntervalSinceNow: -3600)), for: cacheKey, in: .memory)
        let revalidated = try await client.send(request)
        #expect(revalidated.source == .revalidated)
        let storedAt = try #require(client.responseCache.memoryEntry(for: cacheKey)?.storedAt)
        #expect(Date().timeIntervalSince(storedAt) < 60, "the 304 must refresh the entry's stored time")
        #expect(try await client.send(request).source == .cache)
        #expect(try await CacheFixture.hits(key).conditional == 1)
    }
}
