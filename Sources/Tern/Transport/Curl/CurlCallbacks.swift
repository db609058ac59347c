#if canImport(Glibc) || canImport(Musl)
import Foundation

/// libcurl's callbacks for a `CurlExchange`: plain C functions that find their exchange through
/// the user-data pointer and run inside `curl_multi_perform`, with the event loop's lock held.
enum CurlCallbacks {
    static let write: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        data, size, count, context in
        guard let context else { return 0 }
        let exchange = Unmanaged<CurlExchange>.fromOpaque(context).takeUnretainedValue()
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(data)?.assumingMemoryBound(to: UInt8.self), count: size * count)
        return exchange.write(bytes)
    }

    static let header: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        data, size, count, context in
        guard let context else { return 0 }
        let exchange = Unmanaged<CurlExchange>.fromOpaque(context).takeUnretainedValue()
        let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(data)?.assumingMemoryBound(to: UInt8.self), count: size * count)
        return exchange.header(bytes) ? size * count : 0
    }

    static let read: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
        buffer, size, count, context in
        guard let context, let buffer else { return LibCurl.readAbort }
        let exchange = Unmanaged<CurlExchange>.fromOpaque(context).takeUnretainedValue()
        return exchange.read(into: UnsafeMutableRawBufferPointer(start: buffer, count: size * count))
    }

    static let seek: @convention(c) (UnsafeMutableRawPointer?, Int64, Int32) -> Int32 = { context, offset, whence in
        guard let context else { return 1 }
        return Unmanaged<CurlExchange>.fromOpaque(context).takeUnretainedValue().seek(to: offset, whence: whence) ? 0 : 1
    }

    static let progress: @convention(c) (UnsafeMutableRawPointer?, Int64, Int64, Int64, Int64) -> Int32 = { context, _, _, total, sent in
        guard let context else { return 0 }
        Unmanaged<CurlExchange>.fromOpaque(context).takeUnretainedValue().progress(sent: sent, total: total)
        return 0
    }
}
#endif
