import Foundation
import Tern
import TernChildProcess

/// `--stream-upload`: a body produced while it is sent, 1 GiB (128 MiB with `--quick`) of zeros
/// in 64 KB pieces and of unknown length (chunked), PUT to nginx (WebDAV, which stores it),
/// against the curl tool uploading the same bytes from a pipe (`head -c N /dev/zero | curl -T -`).
/// Each contender runs in a child process of its own, alternating who goes first; the stored
/// file's size is checked after every upload. Reports MB/s, and Tern's peak RSS for this upload
/// against a 16 MiB one (flat: the body is never held).
enum StreamedUpload {
    static func run(baseURL: String, rounds: Int, scale: Double, json: Bool) throws {
        let size = scale < 1 ? 128 << 20 : 1 << 30
        let label = scale < 1 ? "stream-upload-128mb" : "stream-upload-1gb"
        var speed = Entry(workload: label, metric: "mb_per_s", better: "higher")
        var memory = Entry(workload: label, metric: "peak_rss_mb_vs_16mb", better: "lower")
        for round in 0..<rounds {
            for name in round.isMultiple(of: 2) ? ["tern", "curl"] : ["curl", "tern"] {
                let path = "uploads/r\(round)-\(name).bin"
                let started = now()
                if name == "tern" {
                    let output = try runChild(["--base-url", baseURL, "--stream-upload-child", path, "--count", String(size)])
                    guard let rss = Double(output) else { throw BenchFailure(description: "tern child said: \(output)") }
                    speed.tern.append(Double(size) / 1_048_576 / (now() - started))
                    memory.tern.append(rss)
                } else {
                    try curlUpload(baseURL + "/" + path, size: size)
                    speed.baseline.append(Double(size) / 1_048_576 / (now() - started))
                }
                try checkStored(path, size: size)
            }
            let small = "uploads/small-\(round).bin"
            let rss = try runChild(["--base-url", baseURL, "--stream-upload-child", small, "--count", String(16 << 20)])
            memory.baseline.append(Double(rss) ?? .nan)
            try checkStored(small, size: 16 << 20)
            log("  \(label): round \(round + 1)/\(rounds) done")
        }
        print(json ? Report.json([speed, memory]) : Report.table([speed, memory], baseline: "curl tool / 16 MiB"))
    }

    /// Child: uploads `size` bytes to `path` with a producer; prints its peak RSS in MB.
    static func child(path: String, baseURL: String, size: Int) async throws {
        let client = Client(baseURL: baseURL) { $0.timeout = 120 }
        let piece = Data(count: 64 * 1024)
        let body = RequestBody.stream { writer in
            var left = size
            while left > 0 {
                let count = min(left, piece.count)
                try await writer.write(count == piece.count ? piece : piece.prefix(count))
                left -= count
            }
        }
        let response = try await client.send(Request<Data>(path, method: .put, body: body))
        guard response.statusCode == 201 || response.statusCode == 204 else {
            throw BenchFailure(description: "PUT answered \(response.statusCode)")
        }
        print(String(format: "%.1f", peakRSSMegabytes()))
    }

    /// The curl tool uploading `size` zero bytes from a pipe (chunked, as Tern's).
    private static func curlUpload(_ url: String, size: Int) throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "head -c \(size) /dev/zero | curl -sS -f -T - -o /dev/null '\(url)'"]
        let output = try process.runReadingOutput()
        guard process.terminationStatus == 0 else { throw BenchFailure(description: "curl failed: \(output)") }
    }

    /// Fails unless nginx stored `size` bytes at `path`; then removes the file.
    private static func checkStored(_ path: String, size: Int) throws {
        let file = (ProcessInfo.processInfo.environment["TERN_BENCH_WWW"] ?? "/nonexistent") + "/" + path
        let stored = ((try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? NSNumber)?.intValue ?? -1
        try? FileManager.default.removeItem(atPath: file)
        guard stored == size else { throw BenchFailure(description: "\(path): nginx stored \(stored) bytes of \(size)") }
    }
}
