import Foundation
import TernCache

/// `tern-bench --cache`: TernCache against its baselines in one run, interleaved rounds, medians.
/// - memory: 100k × 100 B set then get (shuffled) — `MemoryCache`, `NSCache`, a `Dictionary`
///   behind an `NSLock`;
/// - disk: set then get of 100 B, 10 KB and 100 KB values — `DiskCache`, raw SQLite with the same
///   pragmas and cached prepared statements (autocommit writes, point selects), one file per value;
/// - threshold: SQLite-inline against file storage from 1 KB to 128 KB, the measurements behind
///   `DiskCache.Configuration.inlineThreshold`.
enum CacheBench {
    typealias Rates = (set: Double, get: Double)

    /// - Parameter only: "memory", "disk" or "threshold" to run one part; nil for all.
    static func run(rounds: Int, scale: Double, only: String?) {
        let entries = max(1_000, Int(100_000 * scale))
        var results: [String: [String: [Double]]] = [:]
        func note(_ row: String, _ column: String, _ value: Double) { results[row, default: [:]][column, default: []].append(value) }

        if only == nil || only == "memory" {
            log("== memory: \(entries) × 100 B, \(rounds) rounds")
            let keys = (0..<entries).map { "key-\($0)" }
            let order = keys.shuffled()
            let value = Data(repeating: 7, count: 100)
            for round in 0..<rounds {
                var contenders: [(String, () -> Rates)] = [
                    ("MemoryCache", { MemoryBaselines.tern(keys, order, value) }),
                    ("NSCache", { MemoryBaselines.nsCache(keys, order, value) }),
                    ("Dictionary+NSLock", { MemoryBaselines.lockedDictionary(keys, order, value) }),
                ]
                if round.isMultiple(of: 2) { contenders.reverse() }
                for (name, body) in contenders {
                    let rates = body()
                    note("memory set", name, rates.set)
                    note("memory get", name, rates.get)
                }
            }

        }

        if only == nil || only == "disk" {
            for (size, label, count) in [(100, "100 B", 4_000), (10_240, "10 KB", 2_000), (102_400, "100 KB", 500)] {
                let count = max(100, Int(Double(count) * scale))
                log("== disk \(label): \(count) sets then \(count) gets, \(rounds) rounds")
                for round in 0..<rounds {
                    var contenders: [(String, (URL) throws -> Rates)] = [
                        ("DiskCache", { try DiskBaselines.tern($0, size: size, count: count, threshold: nil) }),
                        (
                            "DiskCache, every read recorded",
                            { try DiskBaselines.tern($0, size: size, count: count, threshold: nil, recordsEveryRead: true) }
                        ),
                        ("raw SQLite", { try DiskBaselines.rawSQLite($0, size: size, count: count) }),
                        ("file per value", { try DiskBaselines.files($0, size: size, count: count) }),
                    ]
                    if round.isMultiple(of: 2) { contenders.reverse() }
                    for (name, body) in contenders {
                        let directory = scratch()
                        defer { try? FileManager.default.removeItem(at: directory) }
                        guard let rates = try? body(directory) else { log("  \(name) failed"); continue }
                        note("disk set \(label)", name, rates.set)
                        note("disk get \(label)", name, rates.get)
                    }
                }
            }

        }

        if only == nil || only == "threshold" {
            log("== threshold: inline in SQLite against one file per value")
            for size in [1_024, 4_096, 8_192, 16_384, 32_768, 65_536, 131_072] {
                let count = max(100, Int(Double(size >= 32_768 ? 400 : 1_000) * scale))
                for round in 0..<rounds {
                    var contenders: [(String, Int)] = [("inline", .max), ("file", 0)]
                    if round.isMultiple(of: 2) { contenders.reverse() }
                    for (name, threshold) in contenders {
                        let directory = scratch()
                        defer { try? FileManager.default.removeItem(at: directory) }
                        guard let rates = try? DiskBaselines.tern(directory, size: size, count: count, threshold: threshold) else {
                            continue
                        }
                        note("threshold set \(size / 1_024) KB", name, rates.set)
                        note("threshold get \(size / 1_024) KB", name, rates.get)
                    }
                }
            }
        }
        print(table(results))
    }

    static func scratch() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("tern-bench-cache-\(UUID().uuidString)")
    }

    /// One table: operations per second (median of the rounds) and each baseline's ratio.
    static func table(_ results: [String: [String: [Double]]]) -> String {
        var lines = ["| operation | contender | ops/s (median) | TernCache ÷ contender |", "|---|---|---:|---:|"]
        let rows = results.keys.sorted { rank($0) < rank($1) }
        for row in rows {
            guard let columns = results[row] else { continue }
            let ours = columns["MemoryCache"] ?? columns["DiskCache"] ?? columns["inline"]
            for name in [
                "MemoryCache", "NSCache", "Dictionary+NSLock", "DiskCache", "DiskCache, every read recorded", "raw SQLite",
                "file per value", "inline", "file",
            ] {
                guard let values = columns[name] else { continue }
                let ratio = ours.map { $0.median / values.median }
                lines.append("| \(row) | \(name) | \(Int(values.median)) | " + (ratio.map { String(format: "%.2f", $0) } ?? "") + " |")
            }
        }
        return lines.joined(separator: "\n")
    }

    private static func rank(_ row: String) -> String {
        let prefix = row.hasPrefix("memory") ? "0" : row.hasPrefix("disk") ? "1" : "2"
        let size = row.split(separator: " ").dropFirst(2).first.flatMap { Int($0) } ?? 0
        return prefix + String(format: "%06d", size) + row
    }
}
