#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation

// Foundation APIs newer than Tern's declared minimums (macOS 10.15, iOS 13, tvOS 13, watchOS 6),
// in one place. Every other file calls these helpers instead of checking `#available` itself.
//
// `FileHandle`'s throwing methods (`write(contentsOf:)`, `read(upToCount:)`, `readToEnd()`,
// `seekToEnd()`) arrived in macOS 10.15.4, iOS 13.4, tvOS 13.4 and watchOS 6.2. Their older
// counterparts raise an Objective-C exception on a failed read or write (a full disk, a closed
// pipe), which Swift cannot catch, so on older systems these helpers use POSIX calls on the
// handle's descriptor instead.

package extension FileHandle {
    /// Writes all of `data` at the handle's current offset; throws the system's error on failure.
    func writeAll(_ data: Data) throws {
        if #available(macOS 10.15.4, iOS 13.4, tvOS 13.4, watchOS 6.2, *) {
            try write(contentsOf: data)
            return
        }
        try writeAllPOSIX(fileDescriptor, data)
    }

    /// Moves the handle's offset to the end of the file and returns that offset.
    @discardableResult
    func seekToEndOfFileOrThrow() throws -> UInt64 {
        if #available(macOS 10.15.4, iOS 13.4, tvOS 13.4, watchOS 6.2, *) {
            return try seekToEnd()
        }
        let offset = lseek(fileDescriptor, 0, SEEK_END)
        guard offset >= 0 else { throw lastPOSIXError() }
        return UInt64(offset)
    }

    /// Reads up to `count` bytes from the current offset: fewer at the end of the data, none
    /// (empty) when there is nothing left.
    func readUpTo(_ count: Int) throws -> Data {
        if #available(macOS 10.15.4, iOS 13.4, tvOS 13.4, watchOS 6.2, *) {
            return try read(upToCount: count) ?? Data()
        }
        return try readPOSIX(fileDescriptor, upTo: count)
    }
}

private func writeAllPOSIX(_ descriptor: Int32, _ data: Data) throws {
    try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) throws in
        guard let start = buffer.baseAddress else { return }
        var done = 0
        while done < buffer.count {
            let written = write(descriptor, start + done, buffer.count - done)
            if written < 0 {
                if errno == EINTR { continue }
                throw lastPOSIXError()
            }
            done += written
        }
    }
}

private func readPOSIX(_ descriptor: Int32, upTo count: Int) throws -> Data {
    var data = Data(count: count)
    let length = try data.withUnsafeMutableBytes { (buffer: UnsafeMutableRawBufferPointer) throws -> Int in
        while true {
            let result = read(descriptor, buffer.baseAddress, count)
            if result >= 0 { return result }
            if errno != EINTR { throw lastPOSIXError() }
        }
    }
    return data.prefix(length)
}

private func lastPOSIXError() -> Error {
    POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
}
