import Foundation
import Testing
@testable import Tern

/// Helpers for lifecycle tests: unique counter keys and the fixture server's request counter.
enum Fixture {
    /// A key no other test uses, so each test counts only its own requests.
    static func uniqueKey(_ label: String) -> String { "\(label)-\(UUID().uuidString)" }

    /// How many `/counted` requests the fixture server has received under `key`.
    static func count(_ key: String) async throws -> Int {
        let client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
        return try await client.send(Request<JSON>("count", query: ["key": key])).json["count"]?.int ?? -1
    }

    /// Lets the fixture's requests held under `key` (`hold=key`) go on.
    static func release(_ key: String) async throws {
        let client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
        _ = try await client.send(Request<JSON>("release", query: ["key": key]))
    }
}

/// Collects the terminal callbacks of closure-style requests by index.
final class Outcomes: Sendable {
    private let results = Locked([Int: [Result<Response<JSON>, TernError>]]())

    func record(_ index: Int, _ result: Result<Response<JSON>, TernError>) {
        results.withLock { $0[index, default: []].append(result) }
    }

    var all: [Int: [Result<Response<JSON>, TernError>]] { results.withLock { $0 } }
    func of(_ index: Int) -> [Result<Response<JSON>, TernError>] { results.withLock { $0[index] ?? [] } }

    /// Waits until `count` callbacks arrived or `seconds` passed.
    func wait(for count: Int, seconds: Double = 30) async {
        let deadline = Date().addingTimeInterval(seconds)
        while results.withLock({ $0.values.reduce(0) { $0 + $1.count } }) < count, Date() < deadline {
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
    }
}

/// An object to own requests and then disappear.
// Sendable: it has no state; only its identity and lifetime matter.
final class Screen: @unchecked Sendable {}
