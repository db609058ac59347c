#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// Writes one response body into a file from a starting offset, for `TransportRequest.Destination.file`.
///
/// Each `begin()` (a new response head) starts over at the offset: bytes the file held past it
/// are dropped. POSIX calls rather than `FileHandle`: its throwing methods need macOS 10.15.4 /
/// iOS 13.4, and its older ones raise Objective-C exceptions on a full disk. Failures are
/// returned as `URLError(.cannotWriteToFile)` naming the file and the system's reason.
/// Thread safety: used by one exchange at a time, on its transport's serial event thread.
// Sendable: a transport calls it only from the serial event stream of its one exchange.
final class ResponseFileWriter: @unchecked Sendable {
    private let path: String
    private let offset: Int64
    private var descriptor: Int32 = -1
    private var position: Int64 = 0

    init(url: URL, offset: Int64) {
        self.path = url.path
        self.offset = max(0, offset)
    }

    deinit { if descriptor >= 0 { _ = close(descriptor) } }

    /// Opens the file and cuts it at the offset; nil on success.
    func begin() -> URLError? {
        if descriptor >= 0 { _ = close(descriptor) }
        descriptor = open(path, O_WRONLY | O_CREAT, 0o644)
        guard descriptor >= 0 else { return failure("cannot open") }
        guard ftruncate(descriptor, off_t(offset)) == 0 else { return failure("cannot cut at \(offset)") }
        position = offset
        return nil
    }

    /// Writes a chunk after the previous one; nil on success.
    func write(_ data: Data) -> URLError? {
        if descriptor < 0, let error = begin() { return error }
        return data.withUnsafeBytes { buffer -> URLError? in
            var done = 0
            while done < buffer.count {
                let written = pwrite(descriptor, buffer.baseAddress! + done, buffer.count - done, off_t(position))
                if written < 0 {
                    if errno == EINTR { continue }
                    return failure("cannot write")
                }
                done += written
                position += Int64(written)
            }
            return nil
        }
    }

    /// Closes the file; nil on success.
    func finish() -> URLError? {
        guard descriptor >= 0 else { return nil }
        defer { descriptor = -1 }
        return close(descriptor) == 0 ? nil : failure("cannot close")
    }

    private func failure(_ what: String) -> URLError {
        let reason = String(cString: strerror(errno))
        return URLError(.cannotWriteToFile, userInfo: [NSLocalizedDescriptionKey: "\(what) \(path): \(reason)"])
    }
}
