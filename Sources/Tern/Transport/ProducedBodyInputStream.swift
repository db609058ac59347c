import Foundation

#if canImport(Darwin)
/// Fills one end of a bound stream pair from a `RequestBodyStream`, on a thread of its own, for
/// URLSession to read from the other end (`httpBodyStream`).
enum BoundBodyPump {
    /// The input stream URLSession reads; a thread writes the body into its pair until the body
    /// ends, fails, or URLSession stops reading.
    static func inputStream(for stream: RequestBodyStream) -> InputStream {
        var input: InputStream?
        var output: OutputStream?
        Stream.getBoundStreams(withBufferSize: pieceSize, inputStream: &input, outputStream: &output)
        guard let input, let output else { return InputStream(data: Data()) }
        let sink = UncheckedBox(output)
        let thread = Thread {
            let output = sink.value
            output.open()
            defer { output.close() }
            let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: pieceSize, alignment: 1)
            defer { buffer.deallocate() }
            while true {
                let count = stream.readWaiting(into: buffer)
                guard count > 0 else { return }
                var written = 0
                while written < count {
                    // Unscheduled, the bound output stream waits for room.
                    let step = output.write(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + written, maxLength: count - written)
                    guard step > 0 else { return stream.close() }
                    written += step
                }
            }
        }
        thread.name = "Tern body stream"
        thread.start()
        return input
    }

    private static let pieceSize = 64 * 1024
}
#else
/// A `RequestBodyStream` as the `InputStream` FoundationNetworking reads a request body from:
/// `read` waits for the producer, returns 0 at the end of the body and -1 after a failure.
/// FoundationNetworking reads it from one queue at a time; `state` is only touched there.
final class ProducedBodyInputStream: InputStream {
    private let body: RequestBodyStream
    private var state: Stream.Status = .notOpen
    private var error: (any Error)?

    init(_ body: RequestBodyStream) {
        self.body = body
        super.init(data: Data())
    }

    override func open() { if state == .notOpen { state = .open } }
    override func close() { state = .closed }
    override var streamStatus: Stream.Status { state }
    override var streamError: (any Error)? { error }
    /// True until the body ended: FoundationNetworking ends the body when this says false.
    override var hasBytesAvailable: Bool { state == .open || state == .notOpen }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        let count = body.readWaiting(into: UnsafeMutableRawBufferPointer(start: buffer, count: length))
        if count == 0 { state = .atEnd }
        if count < 0 {
            state = .error
            error = URLError(.cannotCreateFile, userInfo: [NSLocalizedDescriptionKey: "the request body's producer failed"])
        }
        return count
    }

    override func getBuffer(_ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length: UnsafeMutablePointer<Int>) -> Bool {
        false
    }
}
#endif
