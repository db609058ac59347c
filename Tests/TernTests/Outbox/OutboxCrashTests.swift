import Foundation
import Testing
import TernChildProcess
@testable import Tern

// These suites start processes: `Process` exists on macOS and Linux only.
#if os(macOS) || os(Linux)
/// An outbox survives its process killed at any moment: every write it accepted takes effect on
/// the server exactly once, however often the process was killed between accepting, sending and
/// recording the answer.
@Suite struct OutboxCrashTests {
    /// The `tern-outbox-writer` executable, built next to the test bundle.
    static func writer() throws -> URL {
        var executable = Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("tern-outbox-writer")
        if !FileManager.default.fileExists(atPath: executable.path) {
            executable = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(
                ".build/debug/tern-outbox-writer")
        }
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "build the tern-outbox-writer product first")
        return executable
    }

    /// Runs the writer with `arguments`; SIGKILLs it `killAfter` milliseconds after it is ready
    /// (nil: lets it end). Returns what it printed. On a thread of its own, like the cache's crash tests.
    static func run(_ writer: URL, _ arguments: [String], killAfter milliseconds: Int?) async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                let process = ChildProcess()
                process.executableURL = writer
                process.arguments = arguments
                let pipe = Pipe()
                process.standardOutput = .pipe(pipe)
                do {
                    try process.run()
                    let ready = pipe.fileHandleForReading.readData(ofLength: 6)  // "ready\n"
                    if let milliseconds {
                        Thread.sleep(forTimeInterval: Double(milliseconds) / 1000)
                        process.signal(SIGKILL)
                    }
                    let rest = pipe.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()
                    continuation.resume(returning: String(decoding: ready + rest, as: UTF8.self))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    @Test func killedAtRandomMomentsEveryAcceptedWriteTakesEffectExactlyOnce() async throws {
        let writer = try Self.writer()
        let base = try TestServers.fixture()
        let directory = OutboxFixture.directory()
        let name = Fixture.uniqueKey("crash")
        var accepted: [String] = []
        for run in 0..<24 {
            let output = try await Self.run(writer, [directory.path, base, name, "r\(run)"], killAfter: Int.random(in: 20...250))
            #expect(output.hasPrefix("ready"), "run \(run) did not start: \(output)")
            accepted += output.split(separator: "\n").filter { $0.hasPrefix("accepted ") }.map { String($0.dropFirst(9)) }
        }
        let drained = try await Self.run(writer, [directory.path, base, name, "final", "drain"], killAfter: nil)
        #expect(drained.contains("drained"), "the last run left items unsent: \(drained)")
        let effects = try await OutboxFixture.effects(name)
        print("outbox crash test: \(accepted.count) accepted, \(effects.requests) requests, \(effects.replays) answered from the key")
        let counts = Dictionary(effects.order.map { ($0, 1) }, uniquingKeysWith: +)
        #expect(accepted.count > 24, "too few writes accepted to prove anything: \(accepted.count)")
        let lost = accepted.filter { counts[$0] == nil }
        #expect(lost.isEmpty, "accepted but never took effect: \(lost.prefix(10))")
        let doubled = counts.filter { $0.value > 1 }
        #expect(doubled.isEmpty, "took effect more than once: \(doubled.prefix(10))")
        #expect(effects.keys.values.allSatisfy { $0 == 1 })
        // Writes the kill interrupted after their row committed but before "accepted" was printed
        // may take effect too (once): never more than one per run.
        #expect(effects.effects - accepted.count <= 24 && effects.effects >= accepted.count)
    }
}
#endif
