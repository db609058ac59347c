import Foundation
import Testing
@testable import Tern

/// Helpers for the outbox tests: a directory per outbox, the fixture's `/effects` counters, and
/// waiting for items to end.
enum OutboxFixture {
    /// A fresh outbox directory.
    static func directory(_ label: String = #function) -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent(
            "tern-outbox-\(label.prefix(while: { $0 != "(" }))-\(UUID().uuidString)")
    }

    /// A configuration in `directory` with short retry delays.
    static func configuration(_ directory: URL, _ configure: (inout OutboxConfiguration) -> Void = { _ in }) -> OutboxConfiguration {
        var configuration = OutboxConfiguration()
        configuration.directory = directory
        configuration.initialRetryDelay = 0.05
        configuration.maximumRetryDelay = 0.5
        configure(&configuration)
        return configuration
    }

    /// What the fixture's `/effects/NAME` has seen.
    struct Effects {
        var effects: Int
        var requests: Int
        var replays: Int
        var keys: [String: Int]
        var order: [String]
    }

    static func effects(_ name: String) async throws -> Effects {
        let client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
        let json = try await client.send(Request<JSON>("effects/\(name)")).value
        var keys: [String: Int] = [:]
        if case .object(let members)? = json["keys"] { for (key, value) in members { keys[key] = value.int ?? 0 } }
        return Effects(
            effects: json["effects"]?.int ?? -1, requests: json["requests"]?.int ?? -1, replays: json["replays"]?.int ?? -1,
            keys: keys, order: json["order"]?.array?.compactMap(\.string) ?? [])
    }

    /// A POST of `body` to `/effects/NAME` with `query`.
    static func write(_ name: String, _ body: String, query: Parameters = [:]) -> Request<JSON> {
        Request<JSON>("effects/\(name)", method: .post, query: query, body: .data(Data(body.utf8), contentType: "text/plain"))
    }

    /// Waits (at most `seconds`) until no item of `outbox` is pending; returns its items.
    @discardableResult
    static func settle(_ outbox: Outbox, seconds: Double = 20) async throws -> [OutboxItem] {
        let end = Date().addingTimeInterval(seconds)
        while outbox.pendingCount > 0 && Date() < end { try await Task.sleep(nanoseconds: 20_000_000) }
        #expect(outbox.pendingCount == 0, "items still pending after \(seconds) s")
        return outbox.items
    }
}

/// A network that is offline until `report`ed otherwise.
func offlineMonitor() -> NetworkMonitor {
    NetworkMonitor(status: NetworkStatus(isReachable: false))
}

extension NetworkMonitor {
    /// Reports the network reachable (true) or not.
    func set(reachable: Bool) { report(NetworkStatus(isReachable: reachable, interfaces: reachable ? [.wired] : [])) }
}

extension OutboxFixture {
    /// The events of `stream` until `isDone` says so, or `seconds` pass (then what came so far).
    static func events(
        _ stream: AsyncStream<OutboxEvent>, seconds: Double = 20, until isDone: @escaping @Sendable ([OutboxEvent]) -> Bool
    ) async -> [OutboxEvent] {
        let seen = Locked([OutboxEvent]())
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in stream {
                    if seen.withLock({ seen in
                        seen.append(event)
                        return isDone(seen)
                    }) {
                        return
                    }
                }
            }
            group.addTask { try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9)) }
            await group.next()
            group.cancelAll()
        }
        return seen.withLock { $0 }
    }

    /// `outbox.outcome(of:)`, or nil after `seconds`.
    static func outcome(_ outbox: Outbox, _ id: OutboxItem.ID, seconds: Double = 20) async -> OutboxItem? {
        await withTaskGroup(of: OutboxItem?.self) { group in
            group.addTask { await outbox.outcome(of: id) }
            group.addTask {
                try? await Task.sleep(nanoseconds: UInt64(seconds * 1e9))
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
