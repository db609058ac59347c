import Foundation
import Testing
@testable import TernCache

/// A fresh directory under the system's temporary directory, one per test.
func scratchDirectory(_ label: String = #function) -> URL {
    FileManager.default.temporaryDirectory
        .appendingPathComponent("terncache-\(label.prefix(while: { $0 != "(" }))-\(UUID().uuidString)")
}

/// The files a disk cache keeps outside SQLite.
func valueFiles(in directory: URL) -> [String] {
    (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("data").path)) ?? []
}

/// Collects the events a disk cache reports.
final class EventLog: Sendable {
    private let events = Mutex<[CacheError]>([])
    func record(_ event: CacheError) { events.withLock { $0.append(event) } }
    var all: [CacheError] { events.withLock { $0 } }
}

/// A tiny lock-protected box for test bookkeeping.
// Sendable: `value` is only touched under `lock`.
final class Mutex<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<Result>(_ body: (inout Value) -> Result) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}

/// Deterministic bytes of a given size.
func bytes(_ count: Int, seed: Int = 0) -> Data {
    var data = Data(count: count)
    data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) in
        for index in 0..<count { buffer[index] = UInt8((index &* 13 &+ seed) % 256) }
    }
    return data
}

/// `Task.sleep(for:)` needs macOS 13 / iOS 16; the tests build at the package's targets (macOS 10.15, iOS 13).
extension Task where Success == Never, Failure == Never {
    static func sleep(milliseconds: UInt64) async throws {
        try await sleep(nanoseconds: milliseconds * 1_000_000)
    }
}
