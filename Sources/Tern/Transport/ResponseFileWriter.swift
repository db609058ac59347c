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
/// Only a successful body is written: each `begin(status:)` (a new response head) of a 206
/// Partial Content starts over at the offset, dropping bytes the file held past it; any other
/// 2xx starts the file over from byte 0 (the server sent the whole body); any other status
/// leaves the file alone (`isWriting` false: the body is an error page, delivered in memory). POSIX calls rather than `FileHandle`: its throwing methods need macOS 10.15.4 /
/// iOS 13.4, and its older ones raise Objective-C exceptions on a full disk. Failures are
/// returned as `URLError(.cannotWriteToFile)` naming the file and the system's reason.
/// Thread safety: used by one exchange at a time, on its transport's serial event thread.
// Sendable: a transport calls it only from the serial event stream of its one exchange.
final class ResponseFileWriter: @unchecked Sendable {
    private let path: String
    private let offset: Int64
    private var descriptor: Int32 = -1
    private var position: Int64 = 0
    /// Whether the current response's body goes to the file.
    private(set) var isWriting = false

    init(url: URL, offset: Int64) {
        self.path = url.path
        self.offset = max(0, offset)
    }

    deinit { if descriptor >= 0 { _ = close(descriptor) } }

    /// A response with `status` began: opens the file and cuts it where this body starts, when
    /// the body goes to the file; nil on success.
    func begin(status: Int) -> URLError? {
        if descriptor >= 0 { _ = close(descriptor); descriptor = -1 }
        isWriting = Self.writes(status: status)
        guard isWriting else { return nil }
        let start = status == 206 ? offset : 0
        descriptor = open(path, O_WRONLY | O_CREAT, 0o644)
        guard descriptor >= 0 else { return failure("cannot open") }
        guard ftruncate(descriptor, off_t(start)) == 0 else { return failure("cannot cut at \(start)") }
        position = start
        return nil
    }

    /// Whether a response with `status` has its body written to the file (see the type's comment).
    static func writes(status: Int) -> Bool { (200..<300).contains(status) }

    /// Writes a chunk after the previous one (nothing when the body does not go to the file);
    /// nil on success.
    func write(_ data: Data) -> URLError? {
        guard isWriting else { return nil }
        if descriptor < 0 { return failure("not open") }
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
