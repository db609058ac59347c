import Foundation

/// A deflate or inflate stream that keeps its state from one call to the next: what a WebSocket's
/// permessage-deflate compresses and inflates its messages with (raw deflate, one message after
/// another over one sliding window), and what a request body is compressed with in one go.
/// Thread safety: none; its one owner calls it from one thread at a time.
// Sendable: owned by one WebSocket connection and used only on its queue.
final class ZLibCodec: @unchecked Sendable {
    /// Why inflating stopped.
    enum InflateFailure: Error {
        /// More than the limit would come out.
        case tooLarge
        /// The bytes are not a deflate stream (zlib's message).
        case invalid(String)
    }

    private let zlib: ZLib
    private let isDeflating: Bool
    // zlib keeps a pointer back to the stream: it must not move between calls.
    private let stream = UnsafeMutablePointer<ZLib.Stream>.allocate(capacity: 1)
    private var raw: UnsafeMutableRawPointer { UnsafeMutableRawPointer(stream) }
    private static let chunkSize = 32 * 1024

    /// A deflate (`deflating`) or inflate stream; `windowBits` as zlib takes them: 8–15 for a zlib
    /// header, 16 more for gzip, negative for raw deflate.
    init(_ zlib: ZLib, deflating: Bool, windowBits: Int32, level: Int32 = 6) throws(TernError) {
        self.zlib = zlib
        isDeflating = deflating
        stream.initialize(to: ZLib.Stream())
        let code = zlib.start(raw, deflating: deflating, level: level, windowBits: windowBits)
        guard code == 0 else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw .unsupportedConfiguration("zlib \(zlib.version) refused to start (code \(code))")
        }
    }

    deinit {
        _ = isDeflating ? zlib.deflateEnd(raw) : zlib.inflateEnd(raw)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Forgets the window: the next message starts a fresh stream (no context takeover).
    func reset() { _ = isDeflating ? zlib.deflateReset(raw) : zlib.inflateReset(raw) }

    /// `data` deflated and flushed to a byte boundary (`Z_SYNC_FLUSH`), its output ending in the
    /// empty stored block `00 00 FF FF`.
    func deflate(_ data: Data) -> Data {
        var output = Data()
        run(data, flush: 2) { chunk, _ in
            output.append(chunk)
            return true
        }
        return output
    }

    /// `data` deflated to the end of the stream (`Z_FINISH`), its header and trailer included.
    func finish(_ data: Data) throws(TernError) -> Data {
        var output = Data()
        var last: Int32 = 0
        run(data, flush: 4) { chunk, code in
            output.append(chunk)
            last = code
            return true
        }
        guard last == 1 else { throw .unsupportedConfiguration("zlib \(zlib.version) failed to compress (code \(last))") }
        return output
    }

    /// `data` inflated; throws once more than `limit` bytes would come out, before they are kept.
    func inflate(_ data: Data, limit: Int) throws(InflateFailure) -> Data {
        var output = Data()
        var failure: InflateFailure?
        run(data, flush: 2) { chunk, code in
            if code < 0 && code != -5 {  // Z_BUF_ERROR (-5) only says no progress was possible
                failure = .invalid(stream.pointee.message.map { String(cString: $0) } ?? "code \(code)")
                return false
            }
            guard output.count + chunk.count <= limit else {
                failure = .tooLarge
                return false
            }
            output.append(chunk)
            if code == 1 { reset() }  // Z_STREAM_END: a final block; the next message starts afresh
            return true
        }
        if let failure { throw failure }
        return output
    }

    /// Feeds `data` through, at most 1 GiB at a time (zlib counts its input in 32 bits), `flush`
    /// with the last of it, handing each chunk of output (with zlib's code) to `take`, which
    /// returns false to stop. Stops when zlib has nothing more to give, ends the stream or fails.
    private func run(_ data: Data, flush: Int32, take: (Data, Int32) -> Bool) {
        var buffer = [UInt8](repeating: 0, count: Self.chunkSize)
        data.withUnsafeBytes { input in
            defer { (stream.pointee.nextIn, stream.pointee.availableIn) = (nil, 0) }
            let base = input.bindMemory(to: UInt8.self).baseAddress
            var offset = 0
            repeat {
                let count = min(input.count - offset, 1 << 30)
                stream.pointee.nextIn = base.map { UnsafeMutablePointer(mutating: $0 + offset) }
                stream.pointee.availableIn = UInt32(count)
                offset += count
                let mode = offset == input.count ? flush : 0  // Z_NO_FLUSH until the last of it
                while true {
                    let (chunk, code, filled) = buffer.withUnsafeMutableBufferPointer { out -> (Data, Int32, Bool) in
                        stream.pointee.nextOut = out.baseAddress
                        stream.pointee.availableOut = UInt32(out.count)
                        let code = isDeflating ? zlib.deflateStep(raw, mode) : zlib.inflateStep(raw, mode)
                        let produced = out.count - Int(stream.pointee.availableOut)
                        return (Data(bytes: out.baseAddress!, count: produced), code, produced == out.count)
                    }
                    // Z_OK (0) goes on while output filled the buffer (more may wait), input is
                    // left, or (Z_FINISH) the stream has not ended; any other code (stream end, no
                    // progress, an error) ends the run.
                    guard take(chunk, code), code == 0 else { return }
                    if !filled && stream.pointee.availableIn == 0 && mode != 4 { break }
                }
            } while offset < input.count
        }
    }
}
