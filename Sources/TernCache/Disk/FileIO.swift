#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

/// Plain POSIX file operations for the disk cache's value files.
///
/// Not `Data.write(to:)`: on Linux it flushes every file to the disk (1–2 thousand writes a
/// second here against tens of thousands with `write(2)`). A cache needs no flush: a file is
/// renamed into place before its row commits, and a value that was not flushed when the power
/// failed is caught by the size check on read.
enum FileIO {
    /// Writes `data` to a new file at `path`, replacing any file there.
    static func write(_ data: Data, to path: String) throws(CacheError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw failure(path) }
        defer { close(descriptor) }
        let written = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let count = Foundation.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if count < 0 && errno == EINTR { continue }
                guard count > 0 else { return false }
                offset += count
            }
            return true
        }
        guard written else { throw failure(path) }
    }

    /// Flushes the file at `path` to the disk (`fsync`); a file that cannot be opened is left alone.
    static func flush(_ path: String) {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return }
        _ = fsync(descriptor)
        close(descriptor)
    }

    /// The file's bytes, or nil when it is missing or does not hold exactly `expectedSize` bytes.
    static func read(_ path: String, expectedSize: Int) -> Data? {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, Int(status.st_size) == expectedSize else { return nil }
        guard expectedSize > 0 else { return Data() }
        // Read into an uninitialized buffer that the Data then owns: no zero-fill of the whole value.
        guard let buffer = malloc(expectedSize) else { return nil }
        var offset = 0
        while offset < expectedSize {
            let count = Foundation.read(descriptor, buffer + offset, expectedSize - offset)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                free(buffer)
                return nil
            }
            offset += count
        }
        return Data(bytesNoCopy: buffer, count: expectedSize, deallocator: .free)
    }

    /// Atomically moves `source` to `destination`, replacing it.
    static func rename(_ source: String, to destination: String) throws(CacheError) {
        guard Foundation.rename(source, destination) == 0 else { throw failure(destination) }
    }

    /// Deletes a file; a missing file is not an error.
    static func remove(_ path: String) {
        unlink(path)
    }

    /// The names in a directory (not recursive), or an empty list when it cannot be read.
    static func names(in directory: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    }

    /// Creates a directory and its parents if needed.
    static func createDirectory(_ path: String) throws(CacheError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw .io(path: path, reason: error.localizedDescription)
        }
    }

    /// Bytes free for an unprivileged user on the file system holding `path`.
    static func freeSpace(at path: String) -> Int64? {
        var info = statvfs()
        guard statvfs(path, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    private static func failure(_ path: String) -> CacheError {
        .io(path: path, reason: String(cString: strerror(errno)))
    }
}
