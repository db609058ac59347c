import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Tern

/// `--download-file`: 100 MB downloaded to a file, Tern's `Request.download` against URLSession's
/// own download task (`download(for:)`, then a move into place, as an app writes it), each round
/// in a fresh child process per contender so that peak RSS is the contender's own; contenders
/// alternate who goes first. Reports MB/s and peak RSS (VmHWM) medians.
enum DownloadToFile {
    static let size = 104_857_600

    /// Parent: runs `rounds` rounds of both children and prints the table (or JSON lines).
    static func run(baseURL: String, rounds: Int, count: Int, json: Bool) throws {
        var entries = [
            "mb_per_s": Entry(workload: "download-file-100mb", metric: "mb_per_s", better: "higher"),
            "peak_rss_mb": Entry(workload: "download-file-100mb", metric: "peak_rss_mb", better: "lower"),
        ]
        for round in 0..<rounds {
            for name in round.isMultiple(of: 2) ? ["tern", "urlsession"] : ["urlsession", "tern"] {
                let output = try runChild(["--base-url", baseURL, "--download-file-child", name, "--count", String(count)])
                let fields = output.split(separator: " ").compactMap { Double($0) }
                guard fields.count == 2 else { throw BenchFailure(description: "\(name) child said: \(output)") }
                for (metric, value) in zip(["mb_per_s", "peak_rss_mb"], fields) {
                    if name == "tern" { entries[metric]!.tern.append(value) } else { entries[metric]!.baseline.append(value) }
                }
            }
            log("  download-file-100mb: round \(round + 1)/\(rounds) done")
        }
        let ordered = [entries["mb_per_s"]!, entries["peak_rss_mb"]!]
        print(json ? Report.json(ordered) : Report.table(ordered))
    }

    /// Child: `count` downloads of `/100mb.bin` to a file by one contender; prints "MB/s peak-MB".
    static func child(_ name: String, baseURL: String, count: Int) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tern-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("100mb.bin")
        let url = baseURL + "/100mb.bin"
        let configuration = ClientConfiguration()
        let client = Client(configuration: configuration)
        let session = URLSession(configuration: configuration.makeSessionConfiguration())
        let start = now()
        for _ in 0..<count {
            if name == "tern" {
                let options = DownloadOptions(replacesExistingFile: true)
                _ = try await client.send(Request.download(url, to: destination, options: options))
            } else {
                guard #available(macOS 12, iOS 15, tvOS 15, watchOS 8, *) else {
                    throw BenchFailure(description: "URLSession's async download needs macOS 12 or later")
                }
                let (location, response) = try await session.download(for: URLRequest(url: URL(string: url)!))  // available: checked above
                guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw BenchFailure(description: "status") }
                try? FileManager.default.removeItem(at: destination)
                try FileManager.default.moveItem(at: location, to: destination)
            }
            let written = (try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber)?.intValue
            guard written == size else { throw BenchFailure(description: "\(name) wrote \(written ?? -1) bytes") }
        }
        let elapsed = now() - start
        print(String(format: "%.1f %.1f", Double(count * size) / 1_048_576 / elapsed, peakRSSMegabytes()))
    }
}

/// A benchmark run that cannot go on.
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
}
