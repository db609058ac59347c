import Foundation
import Tern
import TernCache

/// `tern-bench --outbox`: what keeping writes in an `Outbox` costs, in interleaved rounds, medians.
/// - enqueue: µs per accepted POST with a 1 KB body, flushed to the disk (`synchronous = FULL`,
///   the default) and not (`NORMAL`), against a TernCache `DiskCache` write of a 1 KB value;
/// - replay: 10,000 items stored by an earlier run sent when the outbox opens, against the same
///   POSTs sent directly by the same client with as many in flight (4), each counted at the
///   server (nginx's log of `/sink/`: every key exactly once);
/// - memory: resident memory while replaying and after, against the direct sends.
enum OutboxBench {
    static let bodySize = 1_024
    static let inFlight = 4

    static func run(baseURL: String, rounds: Int, scale: Double, sinkLog: String?, only: String? = nil) async {
        var results: [String: [String: [Double]]] = [:]
        func note(_ row: String, _ column: String, _ value: Double) { results[row, default: [:]][column, default: []].append(value) }
        let body = Data((0..<bodySize).map { UInt8(ascii: "a") + UInt8($0 % 26) })

        let enqueues = max(100, Int(1_000 * scale))
        for round in 0..<(only == "replay" ? 0 : rounds) {
            if round == 0 { log("== outbox enqueue: \(enqueues) POSTs with a 1 KB body, offline, \(rounds) rounds") }
            var contenders: [(String, (URL) throws -> Double)] = [
                ("outbox, flushed (FULL)", { try enqueueSeconds($0, baseURL: baseURL, body: body, count: enqueues, flushes: true) }),
                ("outbox, not flushed (NORMAL)", { try enqueueSeconds($0, baseURL: baseURL, body: body, count: enqueues, flushes: false) }),
                ("DiskCache write, 1 KB", { try diskCacheSeconds($0, body: body, count: enqueues) }),
            ]
            if round.isMultiple(of: 2) { contenders.reverse() }
            for (name, measure) in contenders {
                let directory = CacheBench.scratch()
                defer { try? FileManager.default.removeItem(at: directory) }
                do { note("enqueue", name, try measure(directory) / Double(enqueues) * 1e6) } catch { log("  \(name) failed: \(error)") }
            }
        }

        let items = max(500, Int(10_000 * scale))
        let client = Client(baseURL: baseURL)
        for round in 0..<(only == "enqueue" ? 0 : rounds) {
            if round == 0 { log("== outbox replay: \(items) POSTs with a 1 KB body, \(inFlight) in flight, \(rounds) rounds") }
            var contenders: [(String, (String) async throws -> Sample)] = [
                ("outbox replay at launch", { try await replay(client, body: body, count: items, path: $0) }),
                ("direct sends", { await direct(client, body: body, count: items, path: $0) }),
            ]
            if round.isMultiple(of: 2) { contenders.reverse() }
            for (name, measure) in contenders {
                let path = "sink/r\(round)-\(name.hasPrefix("outbox") ? "outbox" : "direct")"
                do {
                    let sample = try await measure(path)
                    note("replay", name, Double(items) / sample.seconds)
                    note("peak memory", name, sample.peakMegabytes)
                    note("memory after", name, sample.afterMegabytes)
                    if let sinkLog { note("server count", name, Double(serverCount(sinkLog, path: path, expected: items))) }
                } catch {
                    log("  \(name) failed: \(error)")
                }
            }
            log("  replay: round \(round + 1)/\(rounds) done")
        }
        print(table(results, items: items, enqueues: enqueues))
    }

    /// Seconds for `count` enqueues of a POST into a fresh outbox that is offline.
    static func enqueueSeconds(_ directory: URL, baseURL: String, body: Data, count: Int, flushes: Bool) throws -> Double {
        var configuration = OutboxConfiguration()
        configuration.directory = directory
        configuration.flushesEachWrite = flushes
        configuration.maximumCount = count + 1
        configuration.networkMonitor = NetworkMonitor(status: NetworkStatus(isReachable: false))
        let outbox = try Outbox(client: Client(baseURL: baseURL), configuration: configuration)
        defer { outbox.close() }
        let start = now()
        for index in 0..<count { try outbox.enqueue(post("sink/enqueue/\(index)", body)) }
        return now() - start
    }

    /// Seconds for `count` writes of `body` to fresh keys of a TernCache `DiskCache`.
    static func diskCacheSeconds(_ directory: URL, body: Data, count: Int) throws -> Double {
        var configuration = DiskCache.Configuration()
        configuration.verifiesOnOpen = false
        let cache = try DiskCache.open(directory, configuration: configuration)
        let start = now()
        for index in 0..<count { try cache.setData(body, forKey: "key-\(index)") }
        return now() - start
    }

    struct Sample {
        var seconds: Double
        /// Resident memory above what it was before, at its highest and once every send ended (MB).
        var peakMegabytes: Double
        var afterMegabytes: Double
    }

    /// Stores `count` items while offline (not flushed, to set up quickly), closes the outbox, then
    /// times opening it online until every item is delivered.
    static func replay(_ client: Client, body: Data, count: Int, path: String) async throws -> Sample {
        let directory = CacheBench.scratch()
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = OutboxConfiguration()
        configuration.directory = directory
        configuration.maximumCount = count + 1
        configuration.flushesEachWrite = false
        configuration.networkMonitor = NetworkMonitor(status: NetworkStatus(isReachable: false))
        do {
            let outbox = try Outbox(client: client, configuration: configuration)
            for index in 0..<count { try outbox.enqueue(post("\(path)/\(index)", body)) }
            outbox.close()
        }
        configuration.flushesEachWrite = true
        configuration.networkMonitor = NetworkMonitor(status: NetworkStatus(isReachable: true, interfaces: [.wired]))
        return try await measured {
            let outbox = try Outbox(client: client, configuration: configuration)
            defer { outbox.close() }
            while outbox.pendingCount > 0 { try await Task.sleep(nanoseconds: 1_000_000) }
            let delivered = outbox.items.filter { if case .delivered = $0.state { true } else { false } }.count
            if delivered != count { log("  outbox: \(delivered) of \(count) delivered") }
        }
    }

    /// The same POSTs sent by `client`, `inFlight` at a time, each with its own idempotency key.
    static func direct(_ client: Client, body: Data, count: Int, path: String) async -> Sample {
        // `measured` only rethrows what its body throws; this one throws nothing.
        (try? await measured {
            let failures = await withTaskGroup(of: Bool.self) { group in
                var next = 0
                var failures = 0
                func add() {
                    let request = post("\(path)/\(next)", body, headers: ["Idempotency-Key": UUID().uuidString.lowercased()])
                    group.addTask { (try? await client.send(request)) == nil }
                    next += 1
                }
                while next < min(inFlight, count) { add() }
                for await failed in group {
                    if failed { failures += 1 }
                    if next < count { add() }
                }
                return failures
            }
            if failures > 0 { log("  direct: \(failures) of \(count) failed") }
        }) ?? Sample(seconds: .nan, peakMegabytes: .nan, afterMegabytes: .nan)
    }

    /// Times `body` while sampling resident memory every 5 ms.
    static func measured(_ body: () async throws -> Void) async throws -> Sample {
        let before = currentRSSKilobytes()
        let peak = Locked(before)
        let sampler = Task.detached {
            while !Task.isCancelled {
                let current = currentRSSKilobytes()
                peak.withLock { $0 = max($0, current) }
                try? await Task.sleep(nanoseconds: 5_000_000)
            }
        }
        let start = now()
        try await body()
        let seconds = now() - start
        sampler.cancel()
        let after = currentRSSKilobytes()
        return Sample(
            seconds: seconds, peakMegabytes: (max(peak.withLock { $0 }, after) - before) / 1024, afterMegabytes: (after - before) / 1024)
    }

    static func post(_ path: String, _ body: Data, headers: [String: String] = [:]) -> Request<Data> {
        Request<Data>(path, method: .post, body: .data(body, contentType: "application/json"), headers: headers)
    }

    /// How many POSTs under `path` nginx logged with distinct idempotency keys, warning when a
    /// key came twice or the count is not `expected`.
    static func serverCount(_ logPath: String, path: String, expected: Int) -> Int {
        guard let text = try? String(contentsOfFile: logPath, encoding: .utf8) else { return -1 }
        var keys: [Substring: Int] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 3, fields[0] == "POST", fields[1].hasPrefix("/\(path)/") else { continue }
            keys[fields[2], default: 0] += 1
        }
        let doubled = keys.values.filter { $0 > 1 }.count
        if doubled > 0 || keys.count != expected { log("  server: \(keys.count) keys for \(expected) writes, \(doubled) sent twice") }
        return keys.count
    }

    static func table(_ results: [String: [String: [Double]]], items: Int, enqueues: Int) -> String {
        var lines = ["| row | contender | median | unit |", "|---|---|---:|---|"]
        let units = [
            "enqueue": "µs per request (\(enqueues) per round)", "replay": "requests/s (\(items) items)",
            "peak memory": "MB above the start", "memory after": "MB above the start", "server count": "distinct keys logged",
        ]
        for row in ["enqueue", "replay", "peak memory", "memory after", "server count"] {
            for (name, values) in (results[row] ?? [:]).sorted(by: { $0.key < $1.key }) {
                lines.append(
                    String(
                        format: "| %@ | %@ | %.1f | %@ |", row as NSString, name as NSString, values.median, units[row] as NSString? ?? ""))
            }
        }
        if let enqueue = results["enqueue"], let full = enqueue["outbox, flushed (FULL)"],
            let normal = enqueue["outbox, not flushed (NORMAL)"],
            let disk = enqueue["DiskCache write, 1 KB"]
        {
            lines.append(
                String(
                    format: "\nenqueue ÷ DiskCache write: %.2f× flushed, %.2f× not flushed", full.median / disk.median,
                    normal.median / disk.median))
        }
        if let replay = results["replay"], let outbox = replay["outbox replay at launch"], let direct = replay["direct sends"] {
            lines.append(String(format: "replay ÷ direct sends: %.2f", outbox.median / direct.median))
        }
        return lines.joined(separator: "\n")
    }
}
