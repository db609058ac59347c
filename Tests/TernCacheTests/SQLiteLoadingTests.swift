import Foundation
import Testing
@testable import TernCache
import TernChildProcess

/// SQLite is found at run time on Linux; where it is missing, the disk cache fails with a typed
/// error that says so (the app-level fallback to memory is in `WeatherShowcaseTests`).
@Suite struct SQLiteLoadingTests {
    @Test func theLoadedLibraryNamesItsVersion() throws {
        let sqlite = try SQLiteLibrary.shared()
        #expect(sqlite.version.hasPrefix("3."), "\(sqlite.version)")
    }

    #if !canImport(SQLite3)
    /// Why loading SQLite from `names` failed, or nil when it did not fail with `.sqliteUnavailable`.
    static func unavailableReason(loading names: [String]) -> String? {
        if case .failure(.sqliteUnavailable(let reason)) = SQLiteLibrary.load(from: names) { reason } else { nil }
    }

    @Test func aLibraryThatCannotBeLoadedIsNamedInTheError() throws {
        let reason = try #require(Self.unavailableReason(loading: ["libtern-no-such-sqlite.so.0"]))
        #expect(reason.contains("libtern-no-such-sqlite.so.0"), "\(reason)")
    }

    @Test func aLibraryWithoutSQLitesFunctionsIsRefused() throws {
        // libm is in every Linux process and has none of SQLite's functions.
        let reason = try #require(Self.unavailableReason(loading: ["libm.so.6"]))
        #expect(reason.contains("has no sqlite3_"), "\(reason)")
    }
    #endif

    @Test func theErrorSaysWhatIsMissingAndThatTheDiskCacheNeedsIt() {
        let error = CacheError.sqliteUnavailable(reason: "cannot load libsqlite3.so.0")
        #expect(error.description == "SQLite is unavailable, so the disk cache cannot open: cannot load libsqlite3.so.0")
    }

    #if os(Linux)
    /// A process in which SQLite cannot be loaded (`TERN_SQLITE=none`): opening a disk cache
    /// fails with `.sqliteUnavailable` at once, before anything is created.
    @Test func withoutSQLiteOpeningADiskCacheFailsWithATypedError() async throws {
        let directory = scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let process = ChildProcess()
        process.executableURL = try CrashSafetyTests.writer()
        process.arguments = [directory.path, "1"]
        var environment = ProcessInfo.processInfo.environment
        environment["TERN_SQLITE"] = "none"
        process.environment = environment
        let errors = Pipe()
        process.standardError = .pipe(errors)
        process.standardOutput = .discard
        try process.run()
        // Waited for on a thread of its own, not on one of the tests' shared threads.
        let (status, message) = await withCheckedContinuation { (continuation: CheckedContinuation<(Int32, String), Never>) in
            Thread.detachNewThread {
                let data = errors.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: (process.terminationStatus, String(decoding: data, as: UTF8.self)))
            }
        }
        #expect(status == 1)
        #expect(message == "tern-cache-writer: SQLite is unavailable, so the disk cache cannot open: TERN_SQLITE=none\n")
        #expect(!FileManager.default.fileExists(atPath: directory.path))
    }
    #endif

}
