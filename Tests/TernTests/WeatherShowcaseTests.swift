import Foundation
import Testing

/// Runs the `weather` executable the way a newcomer does and checks what it prints.
@Suite struct WeatherShowcaseTests {
    /// Runs `weather` and waits for it without blocking a Swift concurrency thread (the pool has
    /// only as many threads as cores; a blocked one stalls every other test).
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String) {
        // The test bundle sits in the build folder next to the `weather` executable.
        let buildFolder = Bundle.main.bundleURL.deletingLastPathComponent()
        var executable = buildFolder.appendingPathComponent("weather")
        if !FileManager.default.fileExists(atPath: executable.path) {
            executable = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/debug/weather")
        }
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "build the weather product first (swift build)")
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                do {
                    try process.run()
                    let data = pipe.fileHandleForReading.readDataToEndOfFile()
                    process.waitUntilExit()
                    continuation.resume(returning: (process.terminationStatus, String(decoding: data, as: UTF8.self)))
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    @Test func homeScreenShowsTheFavouritesOffline() async throws {
        let (status, output) = try await Self.run([])
        #expect(status == 0, "\(output)")
        for city in ["北京 Beijing", "上海 Shanghai", "广州 Guangzhou", "哈尔滨 Harbin"] {
            #expect(output.contains(city), "missing \(city) in:\n\(output)")
        }
        #expect(output.contains("4 cities refreshed concurrently"))
    }

    @Test func anUnreachableServerGivesAClearMessagePerCity() async throws {
        let (status, output) = try await Self.run(["--base-url", "http://127.0.0.1:9"])
        #expect(status == 0)
        #expect(output.contains("Transport error"), "\(output)")
    }

    @Test func aMissingBaseURLValueIsAUsageError() async throws {
        let (status, output) = try await Self.run(["--base-url"])
        #expect(status == 2)
        #expect(output.contains("--base-url needs a URL"))
    }
}
