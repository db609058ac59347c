import Foundation
import Testing
@testable import Tern

/// Helpers for the response-cache tests: a client per test with its own cache directory, and the
/// fixture server's `/cached` counters.
enum CacheFixture {
    /// A fresh cache directory.
    static func directory(_ label: String = #function) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent(
            "tern-cache-\(label.prefix(while: { $0 != "(" }))-\(UUID().uuidString)")
    }

    /// A client of the fixture server with `policy` as its default and its own cache directory.
    static func client(
        _ policy: CachePolicy = .disabled, directory: URL = directory(), base: String? = nil,
        configure: (inout ClientConfiguration) -> Void = { _ in }
    ) throws -> Client {
        let base = try base ?? TestServers.fixture()
        return Client(baseURL: base) {
            $0.callbackQueue = .immediate
            $0.cachePolicy = policy
            $0.cacheStorage.directory = directory
            configure(&$0)
        }
    }

    /// `/cached` for a key of its own.
    static func resource(_ key: String, etag: String? = nil, lastModified: Bool = false, cacheControl: String? = nil) -> Request<JSON> {
        var query: Parameters = ["key": key]
        if let etag { query["etag"] = etag }
        if lastModified { query["lm"] = 1 }
        if let cacheControl { query["cc"] = cacheControl }
        return Request<JSON>("cached", query: query)
    }

    /// How many requests `/cached?key=K` received, and how many of them were conditional.
    static func hits(_ key: String) async throws -> (all: Int, conditional: Int) {
        (try await Fixture.count(key), try await Fixture.count(key + ":304"))
    }

    /// Makes `/cached?key=K` answer normally ("up"), with 503 ("503"), or reset the connection ("reset").
    static func setState(_ key: String, _ state: String) async throws {
        let client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
        _ = try await client.send(Request<JSON>("cached-state", query: ["key": key, "state": state]))
    }
}

extension Client {
    /// Sends with the closure API and collects the cache hit and the final result, in order.
    func cachedAndFinal<Value>(_ request: Request<Value>) async -> (hits: [Response<Value>], result: Result<Response<Value>, TernError>) {
        let hits = Locked([Response<Value>]())
        let result = await withCheckedContinuation { continuation in
            send(
                request, queue: .immediate, cached: { response in hits.withLock { $0.append(response) } },
                completion: { continuation.resume(returning: $0) })
        }
        return (hits.withLock { $0 }, result)
    }
}
