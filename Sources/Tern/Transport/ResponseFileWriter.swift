import Foundation

/// Writes one response body into a file from a starting offset, for `TransportRequest.Destination.file`.
///
/// Each `begin()` (a new response head) starts over at the offset: bytes the file held past it
/// are dropped. Failures are returned as `URLError(.cannotWriteToFile)` naming the file.
/// Thread safety: used by one exchange at a time, on its transport's serial event thread.
// Sendable: a transport calls it only from the serial event stream of its one exchange.
final class ResponseFileWriter: @unchecked Sendable {
    private let url: URL
    private let offset: Int64
    private var handle: FileHandle?

    init(url: URL, offset: Int64) {
        self.url = url
        self.offset = max(0, offset)
    }

    /// Opens the file at the offset; nil on success.
    func begin() -> URLError? {
        try? handle?.close()
        handle = nil
        do {
            if offset == 0 || !FileManager.default.fileExists(atPath: url.path) {
                guard FileManager.default.createFile(atPath: url.path, contents: nil) else { return failure("cannot create") }
            }
            let handle = try FileHandle(forWritingTo: url)
            try handle.truncate(atOffset: UInt64(offset))
            try handle.seek(toOffset: UInt64(offset))
            self.handle = handle
            return nil
        } catch {
            return failure(String(describing: error))
        }
    }

    /// Appends a chunk; nil on success.
    func write(_ data: Data) -> URLError? {
        if handle == nil, let error = begin() { return error }
        do {
            try handle?.write(contentsOf: data)
            return nil
        } catch {
            return failure(String(describing: error))
        }
    }

    /// Closes the file; nil on success.
    func finish() -> URLError? {
        defer { handle = nil }
        do {
            try handle?.close()
            return nil
        } catch {
            return failure(String(describing: error))
        }
    }

    private func failure(_ reason: String) -> URLError {
        URLError(.cannotWriteToFile, userInfo: [NSLocalizedDescriptionKey: "cannot write \(url.path): \(reason)"])
    }
}
