import Foundation
import Testing
@testable import Tern
import TernChildProcess

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
        return (
            json["requests"]?.int ?? -1, json["bytes"]?.int ?? -1, json["starts"]?.array?.compactMap(\.int) ?? [],
            json["sha256"]?.string
        )
    }

    /// The size of the file at `url`, 0 when there is none.
    static func size(_ url: URL) -> Int64 {
        ((try? FileManager.default.attributesOfItem(atPath: url.path))?[.size] as? NSNumber)?.int64Value ?? 0
    }

    /// Runs `action` as soon as the file at `url` holds `bytes` bytes, watching from a thread of
    /// its own (the test's concurrency threads may be busy for longer than the whole transfer
    /// takes). Fails the test when that does not happen within 30 s.
    static func whenFile(_ url: URL, reaches bytes: Int64, _ action: @escaping @Sendable () -> Void) async throws {
        let reached = await onThreadOfItsOwn {
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline, size(url) < bytes { usleep(500) }
            let reached = size(url) >= bytes
            if reached { action() }
            return reached
        }
        try #require(reached, "the file never reached \(bytes) bytes")
    }

    // Child processes exist on macOS and Linux only.
    #if os(macOS) || os(Linux)
    /// Sends `signal` to `process` once the file at `url` holds `bytes` bytes, watching from a
    /// thread of its own (the test's concurrency threads may be busy for longer than the whole
    /// transfer takes); waits for the process to end. False when it ended first, or when the file
    /// did not grow that far in `seconds` (the process is then killed all the same, and a test
    /// must not take its partial file for one the signal interrupted).
    static func signal(
        _ signal: Int32, to process: ChildProcess, whenFile url: URL, reaches bytes: Int64,
        within seconds: Double = 60
    ) async -> Bool {
        await onThreadOfItsOwn {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning, Date() < deadline, size(url) < bytes { usleep(1000) }
            let reached = process.isRunning && size(url) >= bytes
            if process.isRunning { process.signal(reached ? signal : SIGKILL) }
            process.waitUntilExit()
            return reached
        }
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
        let run = try await runToolCapturing(arguments)
        #expect(run.status == 0, "\(run.output)\(run.errors)")
        return run.output.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: false).map(String.init) }
    }

    /// Runs `tern-transfer` with `arguments` and extra `environment` to its end, waiting on
    /// threads of its own; one that runs past `seconds` is killed (its status then says so), so a
    /// stuck child fails the test instead of hanging the suite.
    static func runToolCapturing(
        _ arguments: [String], environment: [String: String] = [:], seconds: Double = 180
    )
        async throws -> (status: Int32, output: String, errors: String)
    {
        let process = ChildProcess()
        let output = Pipe(), errors = Pipe()
        process.executableURL = try tool()
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        process.standardOutput = .pipe(output)
        process.standardError = .pipe(errors)
        try process.run()
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
            if process.isRunning { process.signal(SIGKILL) }
        }
        // Standard error is read on a thread of its own beside standard output: a full pipe would
        // block the child.
        async let warned = onThreadOfItsOwn { errors.fileHandleForReading.readDataToEndOfFile() }
        let printed = await onThreadOfItsOwn {
            let printed = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return printed
        }
        return (process.terminationStatus, String(decoding: printed, as: UTF8.self), String(decoding: await warned, as: UTF8.self))
    }

    /// The `peak-rss` figure `tern-transfer` printed, or -1.
    static func peak(_ lines: [[String]]) -> Int64 {
        lines.first { $0.first == "peak-rss" }.flatMap { Int64($0[1]) } ?? -1
    }
    #endif
}
