import Foundation
import Testing
@testable import Tern

/// The fixture server's transfer endpoints (`scripts/fixture_transfers.py`) and scratch folders.
enum Transfers {
    /// A fresh folder under the temporary directory; remove it with `clean`.
    static func scratch(_ label: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("tern-\(label)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    static func clean(_ folder: URL) { try? FileManager.default.removeItem(at: folder) }

    /// The names in `folder`, sorted.
    static func contents(_ folder: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    static func client(_ configure: (inout ClientConfiguration) -> Void = { _ in }) throws -> Client {
        try Client(baseURL: TestServers.fixture()) {
            $0.callbackQueue = .immediate
            configure(&$0)
        }
    }

    /// Sets the download state of `key` (etag, ranges, drop, pace, validator).
    static func setState(_ key: String, _ state: Parameters) async throws {
        var query = state
        query["key"] = key
        _ = try await client().send(Request<JSON>("download-state", query: query))
    }

    /// What the server served under `key`: requests, body bytes, the first byte of each response,
    /// and (with `size`) the SHA-256 of the whole pattern.
    static func stats(_ key: String, size: Int? = nil) async throws -> (requests: Int, bytes: Int, starts: [Int], sha256: String?) {
        var query: Parameters = ["key": key]
        if let size { query["size"] = size }
        let json = try await client().send(Request<JSON>("download-stats", query: query)).json
        return (json["requests"]?.int ?? -1, json["bytes"]?.int ?? -1, json["starts"]?.array?.compactMap(\.int) ?? [],
                json["sha256"]?.string)
    }

    /// The size of the file at `url`, 0 when there is none.
    static func size(_ url: URL) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Runs `action` as soon as the file at `url` holds `bytes` bytes, watching from a thread of
    /// its own (the test's concurrency threads may be busy for longer than the whole transfer
    /// takes). Fails the test when that does not happen within 30 s.
    static func whenFile(_ url: URL, reaches bytes: Int64, _ action: @escaping @Sendable () -> Void) async throws {
        let reached: Bool = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let deadline = Date().addingTimeInterval(30)
                while Date() < deadline, size(url) < bytes { usleep(500) }
                let reached = size(url) >= bytes
                if reached { action() }
                continuation.resume(returning: reached)
            }
        }
        try #require(reached, "the file never reached \(bytes) bytes")
    }

    /// Sends `signal` to `process` once the file at `url` holds `bytes` bytes, watching from a
    /// thread of its own (the test's concurrency threads may be busy for longer than the whole
    /// transfer takes); waits for the process to end. False when it ended first (or in 30 s).
    static func signal(_ signal: Int32, to process: Process, whenFile url: URL, reaches bytes: Int64) async -> Bool {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let deadline = Date().addingTimeInterval(30)
                while process.isRunning, Date() < deadline, size(url) < bytes { usleep(1000) }
                let running = process.isRunning
                if running { kill(process.processIdentifier, signal) }
                process.waitUntilExit()
                continuation.resume(returning: running)
            }
        }
    }

    /// The peak resident memory of this process in bytes (`VmHWM`), and a way to restart it.
    static var peakRSS: Int64 {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
              let kb = Int64(line.split(separator: " ").dropFirst().first ?? "") else { return -1 }
        return kb * 1024
    }

    static var currentRSS: Int64 {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
              let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
              let kb = Int64(line.split(separator: " ").dropFirst().first ?? "") else { return -1 }
        return kb * 1024
    }

    /// Restarts `VmHWM` at the current resident size (Linux: `clear_refs` 5).
    static func resetPeakRSS() {
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    }

    /// The `tern-transfer` executable, built next to the test bundle.
    static func tool() throws -> URL {
        var executable = Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("tern-transfer")
        if !FileManager.default.isExecutableFile(atPath: executable.path) {
            executable = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/debug/tern-transfer")
        }
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "build the tern-transfer product first")
        return executable
    }

    /// Runs `tern-transfer` with `arguments` to its end (waiting off the concurrency threads) and
    /// returns its output lines split in words; expects it to succeed.
    static func runTool(_ arguments: [String]) async throws -> [[String]] {
        let process = Process()
        let output = Pipe()
        process.executableURL = try tool()
        process.arguments = arguments
        process.standardOutput = output
        try process.run()
        let printed: String = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let data = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: String(decoding: data, as: UTF8.self))
            }
        }
        #expect(process.terminationStatus == 0, "\(printed)")
        return printed.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: false).map(String.init) }
    }

    /// The `peak-rss` figure `tern-transfer` printed, or -1.
    static func peak(_ lines: [[String]]) -> Int64 {
        lines.first { $0.first == "peak-rss" }.flatMap { Int64($0[1]) } ?? -1
    }
}
