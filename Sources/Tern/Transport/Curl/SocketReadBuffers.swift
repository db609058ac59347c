#if canImport(Glibc) || canImport(Musl)
import Foundation

/// The buffers WebSocket streams read into, shared: a stream borrows one for a read and gives
/// it back, so an idle socket holds none and a burst of sockets reading once each does not
/// leave the heap full of freed 64 KB holes (one allocated and freed per read would, as small
/// long-lived objects settle between them).
/// Thread safety: safe from any thread.
enum SocketReadBuffers {
    /// The size of each buffer: the most bytes one read takes.
    static let size = 64 << 10
    /// How many idle buffers are kept; more are freed when given back.
    private static let kept = 8

    // Sendable: a buffer is used by one borrower at a time, handed over through `idle`'s lock.
    private struct Buffer: @unchecked Sendable {
        let pointer: UnsafeMutableRawBufferPointer
    }

    private static let idle = Locked<[Buffer]>([])

    /// Runs `body` with a borrowed buffer of `size` bytes, which it must not keep.
    static func borrow<Result>(_ body: (UnsafeMutableRawBufferPointer) -> Result) -> Result {
        let buffer =
            idle.withLock { $0.popLast() }
            ?? Buffer(pointer: .allocate(byteCount: size, alignment: 16))
        defer {
            let surplus = idle.withLock { buffers -> Buffer? in
                guard buffers.count < kept else { return buffer }
                buffers.append(buffer)
                return nil
            }
            surplus?.pointer.deallocate()
        }
        return body(buffer.pointer)
    }
}
#endif
