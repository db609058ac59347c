import Foundation

/// `Task.sleep(for:)` needs macOS 13 / iOS 16; the tests build at the package's targets (macOS 10.15, iOS 13).
extension Task where Success == Never, Failure == Never {
    static func sleep(milliseconds: UInt64) async throws {
        try await sleep(nanoseconds: milliseconds * 1_000_000)
    }
}
