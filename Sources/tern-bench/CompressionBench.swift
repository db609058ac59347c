import Foundation
import Tern
import TernChildProcess

/// `tern-bench --compression`: what compressing a request body costs — milliseconds of CPU per
/// MB of NDJSON (8 MB), gzip and deflate through `RequestCompression`, against the `gzip` tool
/// (`gzip -6`, the same zlib level) compressing the same bytes from a file (its start-up taken
/// out), interleaved rounds, medians.
enum CompressionBench {
    static func run(rounds: Int, scale: Double) {
        let lines = max(10_000, Int(250_000 * scale))
        let text = (0..<lines).map { "{\"id\":\($0),\"city\":\"city-\($0 % 300)\",\"temperature\":\($0 % 40),\"ok\":true}\n" }.joined()
        let body = Data(text.utf8)
        let megabytes = Double(body.count) / 1_048_576
        log("== compression: \(String(format: "%.1f", megabytes)) MB of NDJSON, \(rounds) rounds")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("tern-bench-compress-\(UUID().uuidString).ndjson")
        let empty = file.appendingPathExtension("empty")
        try? body.write(to: file)
        try? Data().write(to: empty)
        defer {
            try? FileManager.default.removeItem(at: file)
            try? FileManager.default.removeItem(at: empty)
        }
        var milliseconds: [String: [Double]] = [:]
        var ratios: [String: Double] = [:]
        for round in 0..<rounds {
            var contenders: [(String, () -> (Double, Int)?)] = [
                ("RequestCompression.gzip", { measure { try? RequestCompression.gzip.compress(body) } }),
                ("RequestCompression.deflate", { measure { try? RequestCompression.deflate.compress(body) } }),
                ("gzip -6 (the tool)", { gzipTool(file, empty: empty) }),
            ]
            if round.isMultiple(of: 2) { contenders.reverse() }
            for (name, body) in contenders {
                guard let (seconds, size) = body() else { continue }
                milliseconds[name, default: []].append(seconds * 1000 / megabytes)
                ratios[name] = Double(size) / (Double(text.utf8.count))
            }
        }
        print("| compressor | ms per MB (median) | compressed size |")
        print("|---|---:|---:|")
        for name in ["RequestCompression.gzip", "RequestCompression.deflate", "gzip -6 (the tool)"] {
            guard let values = milliseconds[name] else { continue }
            print(String(format: "| %@ | %.2f | %.1f %% |", name as NSString, values.median, (ratios[name] ?? .nan) * 100))
        }
    }

    private static func measure(_ compress: () -> Data?) -> (Double, Int)? {
        let start = cpuSeconds()
        guard let output = compress() else { return nil }
        return (cpuSeconds() - start, output.count)
    }

    /// CPU seconds of `gzip -6 -c FILE` minus those of the same on an empty file, and the size it wrote.
    private static func gzipTool(_ file: URL, empty: URL) -> (Double, Int)? {
        guard let tool = ["/usr/bin/gzip", "/bin/gzip"].first(where: FileManager.default.isExecutableFile) else { return nil }
        func run(_ input: URL) -> (Double, Int)? {
            let output = input.appendingPathExtension("gz")
            defer { try? FileManager.default.removeItem(at: output) }
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "\"$0\" -6 -c \"$1\" > \"$2\"", tool, input.path, output.path]
            let start = cpuSeconds(children: true)
            guard (try? process.run()) != nil else { return nil }
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { return nil }
            let size = (try? FileManager.default.attributesOfItem(atPath: output.path)[.size] as? Int) ?? 0
            return (cpuSeconds(children: true) - start, size)
        }
        guard let full = run(file), let none = run(empty) else { return nil }
        return (max(0, full.0 - none.0), full.1)
    }
}
