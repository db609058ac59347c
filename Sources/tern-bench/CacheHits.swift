import Foundation
import Tern

/// `tern-bench --cache-hits`: latency from `send` to the callback of a memory-cache hit (also of
/// one of three variants of a response with `Vary`), a disk-cache hit — each level also with the
/// server deciding freshness (`Cache-Control: max-age`) — and a network round trip to the local server, for the same 1 KB request (raw
/// `Data`: decoding is the serializer's cost, not the cache's), one request at a time. Prints
/// p50, p90 and p99 in µs.
enum CacheHits {
    static func run(baseURL: String, count: Int) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-bench-hits-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        func client(_ policy: CachePolicy, _ name: String, memoryLimit: Int = 16 << 20) -> Client {
            Client(baseURL: baseURL) {
                $0.callbackQueue = .immediate
                $0.cachePolicy = policy
                $0.cacheStorage.directory = directory.appendingPathComponent(name)
                $0.cacheStorage.memoryLimit = memoryLimit
            }
        }
        let request = Request<Data>("1k.json")
        let memory = client(CachePolicy(read: .cacheElseNetwork, write: .memory), "memory")
        // No memory level: a disk hit would otherwise be promoted to memory and measured as one.
        let disk = client(CachePolicy(read: .cacheElseNetwork, write: .disk), "disk", memoryLimit: 0)
        let network = client(.disabled, "network")
        let serverMemory = client(CachePolicy(read: .cacheElseNetwork, write: .memory, freshness: .server), "server-memory")
        let serverDisk = client(CachePolicy(read: .cacheElseNetwork, write: .disk, freshness: .server), "server-disk", memoryLimit: 0)
        let fresh = Request<Data>("fresh/1k.json")
        // Fill the caches (and warm the connection) first; three variants of a response that
        // varies on Accept-Language, the row reading the second.
        for client in [memory, disk, network] { _ = latency(client, request) }
        // The same `max-age` response under both kinds of freshness (it has one more header than
        // `1k.json`, which a hit pays for whoever decides freshness).
        for client in [memory, disk, serverMemory, serverDisk] { _ = latency(client, fresh) }
        let variants = ["zh", "en", "fr"].map { Request<Data>("varied/1k.json", headers: ["Accept-Language": $0]) }
        for variant in variants { _ = latency(memory, variant) }
        // The request of the variant row against a response that does not vary: what `Vary`
        // matching itself adds is the difference between the two rows.
        let sameHeader = Request<Data>("1k.json", headers: ["Accept-Language": "en"])
        _ = latency(memory, sameHeader)

        print("| path (1 KB body) | p50 µs | p90 µs | p99 µs | source |")
        print("|---|---:|---:|---:|---|")
        let rows: [(String, Client, (Client, Int) -> ([Double], Set<String>))] = [
            ("memory-cache hit", memory, { chained($0, request, count: $1) }),
            ("memory-cache hit, decoded as `JSON`", memory, { chained($0, Request<JSON>("1k.json"), count: $1) }),
            ("memory-cache hit, sending `Accept-Language`, no `Vary`", memory, { chained($0, sameHeader, count: $1) }),
            ("memory-cache hit, one of three `Vary` variants", memory, { chained($0, variants[1], count: $1) }),
            ("memory-cache hit, `max-age` response, the app's freshness", memory, { chained($0, fresh, count: $1) }),
            ("memory-cache hit, `max-age` response, the server's freshness", serverMemory, { chained($0, fresh, count: $1) }),
            ("disk-cache hit", disk, { chained($0, request, count: $1) }),
            ("disk-cache hit, `max-age` response, the app's freshness", disk, { chained($0, fresh, count: $1) }),
            ("disk-cache hit, `max-age` response, the server's freshness", serverDisk, { chained($0, fresh, count: $1) }),
            ("network round trip (nginx, loopback)", network, { chained($0, request, count: $1) }),
        ]
        for (name, client, measure) in rows {
            let (samples, sources) = measure(client, count)
            print(
                String(
                    format: "| %@ | %.1f | %.1f | %.1f | %@ |", name as NSString, samples.percentile(50), samples.percentile(90),
                    samples.percentile(99), sources.sorted().joined(separator: ", ") as NSString))
        }
    }

    /// Like an app on its main queue: each request is sent from a serial queue with that queue as
    /// its callback queue, and the callback sends the next one. Returns each send-to-callback time
    /// in µs. (A thread blocked on a semaphore would add its own wake-up to every sample.)
    private static func chained<Value>(_ client: Client, _ request: Request<Value>, count: Int) -> ([Double], Set<String>) {
        let queue = DispatchQueue(label: "tern-bench.app")
        let done = DispatchSemaphore(value: 0)
        let results = Results()
        @Sendable func next(_ remaining: Int) {
            guard remaining > 0 else { done.signal(); return }
            let start = now()
            client.send(request, queue: .queue(queue)) { outcome in
                results.add((now() - start) * 1e6, outcome.map { "\($0.source)" }.mapError { $0 }.description)
                next(remaining - 1)
            }
        }
        queue.async { next(count) }
        done.wait()
        return results.value
    }

    /// Seconds from `send` to its callback, and where the response came from.
    private static func latency(_ client: Client, _ request: Request<Data>) -> (Double, String) {
        let done = DispatchSemaphore(value: 0)
        let result = Box()
        let start = now()
        client.send(request) { outcome in
            result.set(now() - start, outcome.map { "\($0.source)" }.mapError { $0 }.description)
            done.signal()
        }
        done.wait()
        return result.value
    }
}

/// Samples collected on the benchmark's serial queue.
// Sendable: only touched on that queue, then read after the semaphore wait.
private final class Results: @unchecked Sendable {
    private(set) var value: ([Double], Set<String>) = ([], [])
    func add(_ microseconds: Double, _ source: String) {
        value.0.append(microseconds)
        value.1.insert(source)
    }
}

/// A result handed from a callback to the waiting thread.
// Sendable: written once by the callback before the semaphore is signalled, read after the wait.
private final class Box: @unchecked Sendable {
    private(set) var value: (Double, String) = (0, "")
    func set(_ seconds: Double, _ source: String) { value = (seconds, source) }
}

extension Result where Success == String {
    fileprivate var description: String {
        switch self {
        case .success(let source): source
        case .failure(let error): "failed: \(error)"
        }
    }
}
