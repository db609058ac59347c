import Foundation
import Testing
@testable import Tern

/// Cache behaviour that differs by platform or environment: a directory per app, an open that
/// fails once (a locked device, a full disk) and is tried again, JSON bodies that cannot be keyed.
@Suite struct CachePlatformTests {
    @Test func theDefaultDirectoryBelongsToThisExecutable() {
        let directory = ResponseCache.defaultDirectory(baseURL: "https://api.example.com/v1")
        #expect(directory.pathComponents.suffix(3) == ["Tern", ResponseCache.appIdentifier, "api.example.com"])
        #expect(ResponseCache.appIdentifier == (Bundle.main.bundleIdentifier ?? ProcessInfo.processInfo.processName))
        #expect(
            ResponseCache.defaultDirectory(baseURL: nil, app: "weather") != ResponseCache.defaultDirectory(baseURL: nil, app: "tern-bench"))
        #expect(ResponseCache.defaultDirectory(baseURL: nil, app: "a").lastPathComponent == "default")
    }

    @Test func aDiskCacheThatFailedToOpenIsTriedAgain() async throws {
        // A file where the cache directory should be: the first open fails.
        let parent = CacheFixture.directory()
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true)
        let directory = parent.appendingPathComponent("cache")
        try Data("not a directory".utf8).write(to: directory)
        let cache = ResponseCache(directory: directory, memoryLimit: 1 << 20, diskLimit: 1 << 20, reopenDelay: 0.2)
        let policy = CachePolicy(write: .disk)
        let key = try #require(CacheKey(URLRequest(url: URL(string: "https://api.test/a")!), policy: policy))
        let http = try #require(
            HTTPURLResponse(url: URL(string: "https://api.test/a")!, statusCode: 200, httpVersion: nil, headerFields: [:]))
        cache.store(CachedResponse(http, body: Data("a".utf8), key: key), for: key, in: .disk)
        #expect(cache.diskEntry(for: key) == nil)

        // The obstacle goes away (the device is unlocked); within the delay nothing is retried…
        try FileManager.default.removeItem(at: directory)
        cache.store(CachedResponse(http, body: Data("b".utf8), key: key), for: key, in: .disk)
        #expect(!FileManager.default.fileExists(atPath: directory.path))
        // …after it, the disk level opens and works.
        try await Task.sleep(milliseconds: 300)  // not Thread.sleep: it would hold one of the few shared threads
        cache.store(CachedResponse(http, body: Data("c".utf8), key: key), for: key, in: .disk)
        cache.memory.removeAll()
        #expect(cache.diskEntry(for: key)?.body == Data("c".utf8))
    }

    @Test func aJSONBodyKeysCanonicallyAndAnInvalidOneFallsBackToItsBytes() throws {
        func key(_ body: String) -> CacheKey? {
            var request = URLRequest(url: URL(string: "https://api.test/search")!)
            request.httpMethod = "POST"
            request.httpBody = Data(body.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            return CacheKey(request, policy: CachePolicy(write: .memory))
        }
        #expect(key(#"{"b":1,"a":2}"#) == key(#"{"a":2,"b":1}"#))
        #expect(key(#"{"a": "#) != nil, "a body that is not JSON is keyed by its bytes")
        #expect(key(#"{"a": "#) != key(#"{"a": 1}"#))
    }
}
