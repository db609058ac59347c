import Foundation
import Testing
@testable import TernCache
import TernChildProcess

// These suites start processes: `Process` exists on macOS and Linux only.
#if os(macOS) || os(Linux)
/// A disk cache survives a process killed at any moment, and an unusable database is rebuilt.
@Suite struct CrashSafetyTests {
    /// The `tern-cache-writer` executable, built next to the test bundle.
    static func writer() throws -> URL {
        var executable = Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("tern-cache-writer")
        if !FileManager.default.fileExists(atPath: executable.path) {
            executable = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(
                ".build/debug/tern-cache-writer")
        }
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "build the tern-cache-writer product first")
        return executable
    }

    /// The bytes `tern-cache-writer` writes for a version and size (its `CrashPattern`).
    static func expected(version: Int, size: Int) -> Data {
        var data = Data(count: size)
        data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
            for index in 0..<size { buffer[index] = UInt8((index &* 7 &+ version) % 251) }
        }
        return data
    }

    /// Starts the writer, lets it run `milliseconds` after it is ready, then SIGKILLs it. Runs on
    /// a thread of its own: on Linux Swift's tasks run on Dispatch's few global threads, and a
    /// wait for a process there holds back every other test meanwhile.
    static func runAndKill(_ writer: URL, directory: URL, seed: Int, milliseconds: Int) async throws -> Int32 {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                let process = ChildProcess()
                process.executableURL = writer
                process.arguments = [directory.path, String(seed)]
                let pipe = Pipe()
                process.standardOutput = .pipe(pipe)
                do {
                    try process.run()
                    _ = pipe.fileHandleForReading.readData(ofLength: 6)  // "ready\n"
                    Thread.sleep(forTimeInterval: Double(milliseconds) / 1000)
                    process.signal(SIGKILL)
                    process.waitUntilExit()
                    continuation.resume(returning: process.terminationStatus)
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    /// Opens the store, checks SQLite's integrity and every value, and closes it again.
    static func verify(_ directory: URL, events: EventLog) throws -> Int {
        var configuration = DiskCache.Configuration()
        configuration.onEvent = { events.record($0) }
        let cache = try DiskCache.open(directory, configuration: configuration)
        #expect(try cache.integrityCheck() == "ok")
        var checked = 0
        for key in try cache.keys() {
            let entry = try #require(try cache.entry(forKey: key))
            let fields = String(decoding: try #require(entry.extendedData), as: UTF8.self).split(separator: " ").compactMap { Int($0) }
            try #require(fields.count == 2, "metadata of \(key)")
            #expect(entry.data.count == fields[1], "\(key): \(entry.data.count) bytes, written \(fields[1])")
            #expect(entry.data == expected(version: fields[0], size: fields[1]), "\(key) reads back differently")
            checked += 1
        }
        let files = Set(valueFiles(in: directory))
        #expect(files.count <= checked, "a value file without a row survived reopening")
        return checked
    }

    @Test func killedWritersNeverLeaveACorruptStoreOrATornValue() async throws {
        let writer = try Self.writer()
        let directory = scratchDirectory()
        let events = EventLog()
        var generator = SystemRandomNumberGenerator()
        var checked = 0
        for round in 0..<24 {
            let delay = Int.random(in: 20...250, using: &generator)
            let status = try await Self.runAndKill(writer, directory: directory, seed: round * 7_919 + 1, milliseconds: delay)
            #expect(status == SIGKILL, "round \(round): the writer ended by itself (\(status)) instead of being killed")
            checked += try Self.verify(directory, events: events)
        }
        #expect(events.all.isEmpty, "no kill may damage the database: \(events.all)")
        #expect(checked > 24, "the writers stored values")
    }

    @Test(arguments: ["header", "middle", "not a database"])
    func anUnusableDatabaseIsMovedAsideAndRebuilt(damage: String) throws {
        let directory = scratchDirectory()
        do {
            let cache = try DiskCache.open(directory)
            for index in 0..<400 { try cache.setData(bytes(900, seed: index), forKey: "k\(index)") }
        }
        let database = directory.appendingPathComponent("manifest.sqlite")
        var contents = try Data(contentsOf: database)
        switch damage {
        case "header": contents.replaceSubrange(0..<100, with: bytes(100, seed: 99))
        case "middle":
            contents.replaceSubrange(
                4_096..<min(contents.count, 4_096 * 40), with: Data(repeating: 0x5A, count: min(contents.count, 4_096 * 40) - 4_096))
        default: contents = Data("this is not a SQLite database, it is a note\n".utf8)
        }
        try contents.write(to: database)

        let events = EventLog()
        var configuration = DiskCache.Configuration()
        configuration.onEvent = { events.record($0) }
        let cache = try DiskCache.open(directory, configuration: configuration)
        guard case .recoveredFromCorruption(let movedTo, _) = events.all.first else {
            Issue.record("no recovery reported: \(events.all)"); return
        }
        #expect(FileManager.default.fileExists(atPath: movedTo + "/manifest.sqlite"))
        #expect(try cache.totalCount() == 0 && (try cache.integrityCheck()) == "ok")
        try cache.setData(Data("works".utf8), forKey: "after")
        #expect(try cache.data(forKey: "after") == Data("works".utf8))
    }

    @Test func aDirectoryThatCannotBeCreatedIsATypedError() throws {
        let file = scratchDirectory()
        try Data("a file, not a directory".utf8).write(to: file)
        #expect(throws: CacheError.self) { _ = try DiskCache.open(file.appendingPathComponent("cache")) }
        do {
            _ = try DiskCache.open(file.appendingPathComponent("cache"))
        } catch {
            guard case .io(let path, _) = error else { Issue.record("expected .io, got \(error)"); return }
            #expect(path.hasPrefix(file.path))
        }
    }
}
#endif
