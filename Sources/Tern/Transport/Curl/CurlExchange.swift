#if canImport(Glibc) || canImport(Musl)
#if canImport(Glibc)
import Glibc
#else
import Musl
#endif
import Foundation

/// One exchange of a `CurlTransport`: its easy handle's options, the callbacks libcurl calls while
/// it runs, and the events they become.
///
/// Created on the caller's thread with nothing but values; everything after `attach` happens with
/// the event loop's lock held: libcurl calls the callbacks from `curl_multi_perform` on the loop
/// thread, or on the caller's thread while a request sent directly goes out (its events are then
/// held back, and its body left, for the loop thread). libcurl reaches it through an unretained
/// pointer; the loop's table owns it until after `curl_multi_remove_handle`.
/// Events follow the `Transport` contract: one `.response` per final head (1xx heads are skipped),
/// `.data`, `.sentBytes`, then exactly one `.completed`.
// Sendable: handed to the event loop once (through the transport's locked inbox, or under the
// loop's lock); only code holding that lock touches it afterwards.
final class CurlExchange: @unchecked Sendable {
    let id: UInt64
    let request: TransportRequest
    /// Where events go; dropped with the last one (`.completed`), so that the request's closures,
    /// and what they captured, are not kept by whatever still holds the exchange.
    private var deliver: (@Sendable (TransportEvent) -> Void)?
    /// Events kept back while a caller's thread drives libcurl (`holdEvents`), for the loop thread
    /// to deliver; nil when events go out as they come. `pausedWhileHeld`: that thread refused
    /// body bytes (`write` paused the transfer), for the loop to take. `decodesBody`: the head
    /// announced a `Content-Encoding`, whose decoded bytes are never refused (see `write`).
    private var held: [TransportEvent]?
    private var pausedWhileHeld = false, decodesBody = false
    private(set) var easy: LibCurl.Handle?
    /// The header lines libcurl sends, kept alive while the transfer runs.
    private var headerList: CurlHeaderList?
    /// libcurl's text for a failure (CURLOPT_ERRORBUFFER, CURL_ERROR_SIZE bytes).
    private let errorBuffer: UnsafeMutablePointer<CChar> = {
        let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: 256)
        buffer.initialize(repeating: 0, count: 256)
        return buffer
    }()
    private var status = 0
    private var headers: [(name: String, value: String)] = []
    private var head: ResponseHead?
    /// Between a status line and the blank line that ends its head.
    private var readingHead = false
    private var limit: Int?
    private var file: ResponseFileWriter?
    private var received = 0
    /// The body so far, when it goes to memory and nobody watches it arrive: handed over once,
    /// at the end, in one buffer sized from `Content-Length` (one copy instead of two, and no
    /// event per chunk). Nil when each chunk is reported as it comes.
    private var body: Data?
    /// Bytes `body` is still to reserve from `Content-Length` (0: done, or unknown).
    private var reservation = 0
    /// Uptime (ns) of the last `.receiving` sent while `body` fills.
    private var lastSignOfLife: UInt64 = 0
    private var failure: URLError?
    private var upload: Int32 = -1
    private var uploaded: Int64 = -1
    /// The body produced while it is sent, if it is; `whenBodyReadable` wakes the loop to send
    /// more of it (set by the transport before the exchange is submitted).
    private let bodyStream: RequestBodyStream?
    var whenBodyReadable: (@Sendable () -> Void)?
    /// What `curl_easy_pause` holds now: the response (a slow reader), the body (nothing to send yet).
    private var receivePaused = false, sendPaused = false
    /// Bytes of a produced body handed to libcurl: its progress counts chunk framing too.
    private var bodyBytesRead: Int64 = 0
    private(set) var isFinished = false
    /// The URL as libcurl gets it.
    private let url: String?
    /// Where it goes (scheme and authority, as written): the loop queues exchanges per origin.
    let origin: String
    /// Whether it spoke HTTP/2 (its origin then multiplexes).
    private(set) var spokeHTTP2 = false

    /// Headers, credential, cookies, TLS and proxy of the transport.
    private let settings: CurlSettings

    init(id: UInt64, request: TransportRequest, settings: CurlSettings, events: @escaping @Sendable (TransportEvent) -> Void) {
        self.id = id
        self.request = request
        self.settings = settings
        deliver = events
        url = request.urlRequest.url?.absoluteString
        origin = url.map(Self.origin) ?? ""
        if case .stream(let stream) = request.body { bodyStream = stream } else { bodyStream = nil }
        switch request.destination {
        case .memory(let bytes):
            limit = bytes
            if !request.streamsBody { body = Data() }
        case .file(let url, let offset):
            file = ResponseFileWriter(url: url, offset: offset)
        }
    }

    deinit {
        errorBuffer.deallocate()
        if upload >= 0 { close(upload) }
    }

    /// Sets `easy` up for this exchange; nil on success, else why it cannot start.
    func attach(_ easy: LibCurl.Handle, curl: LibCurl) -> URLError? {
        self.easy = easy
        let urlRequest = request.urlRequest
        guard let url else { return URLError(.badURL) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        curl.set(easy, .url, url)
        curl.set(easy, .noSignal, 1)
        curl.set(easy, .protocols, LibCurl.httpProtocols)
        curl.set(easy, .followLocation, 0)
        curl.set(easy, .pipeWait, 1)
        curl.set(easy, .bufferSize, Self.receiveBufferSize)
        curl.set(easy, .errorBuffer, UnsafeRawPointer(errorBuffer))
        curl.set(easy, .writeFunction, unsafeBitCast(CurlCallbacks.write, to: UnsafeRawPointer.self))
        curl.set(easy, .writeData, UnsafeRawPointer(context))
        curl.set(easy, .headerFunction, unsafeBitCast(CurlCallbacks.header, to: UnsafeRawPointer.self))
        curl.set(easy, .headerData, UnsafeRawPointer(context))
        // No libcurl timeout: Tern enforces every deadline itself and cancels the exchange (a
        // streamed response counts from its last chunk, which libcurl's total timeout cannot).
        if let error = Self.configureConnection(easy, curl: curl, settings: settings, host: urlRequest.url?.host) { return error }
        let method = (urlRequest.httpMethod ?? "GET").uppercased()
        switch Self.configureBody(easy, curl: curl, method: method, body: request.body, context: context) {
        case .success(let descriptor): upload = descriptor
        case .failure(let error): return error
        }
        guard let headers = settings.headerList(for: urlRequest, emptyBody: CurlSettings.sendsEmptyBody(method), curl: curl) else {
            return URLError(.cannotLoadFromNetwork)
        }
        curl.set(easy, .acceptEncoding, headers.acceptEncoding)
        curl.set(easy, .httpHeader, UnsafeRawPointer(headers.list))
        headerList = headers
        return nil
    }

    // MARK: Callbacks (the loop's lock held, inside curl_multi_perform)

    /// A header line, status lines included; the blank line ends a head. Parsed as bytes
    /// (Foundation's trimming and comparison took a third of a small request's CPU).
    func header(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        var end = line.count
        while end > 0, Self.isSpace(line[end - 1]) { end -= 1 }
        if end >= 5, line[0] == 0x48, line[1] == 0x54, line[2] == 0x54, line[3] == 0x50, line[4] == 0x2F {  // "HTTP/"
            status = Self.statusCode(UnsafeBufferPointer(rebasing: line[..<end]))
            headers.removeAll(keepingCapacity: true)
            headers.reserveCapacity(16)
            readingHead = true
            return true
        }
        // Trailer lines after a chunked body are not a new head.
        guard readingHead else { return true }
        if end > 0 {
            guard let colon = line[..<end].firstIndex(of: 0x3A) else { return true }
            var start = colon + 1
            while start < end, Self.isSpace(line[start]) { start += 1 }
            headers.append(
                (
                    String(decoding: UnsafeBufferPointer(rebasing: line[..<colon]), as: UTF8.self),
                    String(decoding: UnsafeBufferPointer(rebasing: line[start..<end]), as: UTF8.self)
                ))
            return true
        }
        // The end of a head. An informational (1xx) one is followed by the real one.
        readingHead = false
        guard status >= 200 else { return true }
        let (fields, setsCookies) = Self.joined(headers)
        guard let url = request.urlRequest.url else {
            failure = URLError(.badServerResponse)
            return false
        }
        // Foundation's HTTPURLResponse is built later, only if someone asks for it.
        let response = ResponseHead(url: url, statusCode: status, headerFields: fields)
        if let problem = ResponseFraming.problem(
            contentLength: response.value(forHTTPHeaderField: "Content-Length"),
            transferEncoding: response.value(forHTTPHeaderField: "Transfer-Encoding"))
        {
            failure = ResponseFraming.error(problem)
            return false
        }
        head = response
        decodesBody = response.value(forHTTPHeaderField: "Content-Encoding").map { !ResponseHead.sameName($0, "identity") } ?? false
        received = 0
        if setsCookies, request.urlRequest.httpShouldHandleCookies {
            settings.cookies.setCookies(HTTPCookie.cookies(withResponseHeaderFields: fields, for: url), for: url, mainDocumentURL: nil)
        }
        let announced = response.expectedContentLength
        if let limit, announced > Int64(limit) {
            failure = URLError(.dataLengthExceedsMaximum)
            return false
        }
        if body != nil {
            // A new head replaces the body of the one before (an answered challenge).
            body = Data()
            reservation = announced > 0 ? Int(min(announced, Self.largestReservation)) : 0
            if held == nil { reserveBody() }
        }
        if let file, let error = file.begin(status: status) {
            failure = error
            return false
        }
        events(.head(response))
        // A sign of life: a body that arrives within the interval sends no `.receiving` at all.
        lastSignOfLife = DispatchTime.now().uptimeNanoseconds
        return true
    }

    /// The shortest time between two `.receiving` events of a buffered body (ns).
    static let signOfLifeInterval: UInt64 = 100_000_000

    /// The most a body reserves from its `Content-Length` (a server may announce more than it sends).
    static let largestReservation: Int64 = 64 << 20

    /// libcurl's receive buffer: the curl tool's 100 KB (the default 16 KB is six reads for one).
    static let receiveBufferSize = 100 << 10

    /// Reserves the body's buffer from its `Content-Length` on the loop thread (made on a
    /// caller's thread, a large one would stay cached in that thread's malloc arena).
    private func reserveBody() {
        var reserved = Data()
        reserved.reserveCapacity(reservation)
        if let body, !body.isEmpty { reserved.append(body) }
        body = reserved
        reservation = 0
    }

    /// A piece of the (decoded) body: its byte count when taken, 0 to fail, or
    /// `LibCurl.writePause` on a caller's thread, which sends the request and leaves the body to
    /// the loop (libcurl reads up to a hundred buffers in one `curl_multi_perform`). A decoded
    /// body is taken there, under its size limit: paused, libcurl would keep all that one read
    /// decodes to, up to 64 MB from a compression bomb.
    func write(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        if held != nil, !decodesBody {
            pausedWhileHeld = true
            return LibCurl.writePause
        }
        received += bytes.count
        if let limit, received > limit {
            failure = URLError(.dataLengthExceedsMaximum)
            return 0
        }
        if body != nil {
            if reservation > 0, held == nil { reserveBody() }
            body?.append(bytes)
            // Nothing else is reported until the end: tell the idle timeout the body is coming,
            // at most a few times a second.
            let now = DispatchTime.now().uptimeNanoseconds
            if now &- lastSignOfLife >= Self.signOfLifeInterval {
                lastSignOfLife = now
                events(.receiving(Int64(received)))
            }
            return bytes.count
        }
        let chunk = Data(bytes)
        if let file, let error = file.write(chunk) {
            failure = error
            return 0
        }
        events(.data(chunk))
        return bytes.count
    }

    /// Fills `buffer` from the body file or stream; the byte count, 0 at the end, the pause code
    /// (nothing produced yet) or the abort code.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        if let bodyStream {
            switch bodyStream.read(into: buffer, whenReadable: whenBodyReadable ?? {}) {
            case .bytes(let count):
                bodyBytesRead += Int64(count)
                return count
            case .end: return 0
            case .failed: return LibCurl.readAbort
            case .pending:
                sendPaused = true
                return LibCurl.readPause
            }
        }
        #if canImport(Glibc)
        let count = Glibc.read(upload, buffer.baseAddress, buffer.count)
        #else
        let count = Musl.read(upload, buffer.baseAddress, buffer.count)
        #endif
        if count < 0 {
            failure = URLError(.cannotOpenFile, userInfo: [NSLocalizedDescriptionKey: "cannot read the body file"])
            return LibCurl.readAbort
        }
        return count
    }

    /// Moves the body file to `offset` (`whence` as for lseek); whether it worked.
    func seek(to offset: Int64, whence: Int32) -> Bool {
        lseek(upload, off_t(offset), whence) >= 0
    }

    /// Upload progress.
    func progress(sent: Int64, total: Int64) {
        let sent = bodyStream == nil ? sent : min(sent, bodyBytesRead)
        guard sent != uploaded else { return }
        uploaded = sent
        events(.sentBytes(sent, expected: total > 0 ? total : nil))
    }

    /// Pauses or resumes reading the response (a slow reader), keeping a paused body paused.
    func setReceivePaused(_ paused: Bool, curl: LibCurl) {
        receivePaused = paused
        applyPause(curl)
    }

    /// Sends more of a produced body, if sending waited for it.
    func resumeSending(curl: LibCurl) {
        guard sendPaused else { return }
        sendPaused = false
        applyPause(curl)
    }

    private func applyPause(_ curl: LibCurl) {
        guard let easy, !isFinished else { return }
        _ = curl.easyPause(easy, (receivePaused ? LibCurl.pauseReceiving : 0) | (sendPaused ? LibCurl.pauseSending : 0))
    }

    /// Whether its body is produced while it is sent (such an exchange always starts on the loop).
    var producesBody: Bool { bodyStream != nil }

    // MARK: Events

    private func events(_ event: TransportEvent) {
        if held != nil { held?.append(event) } else { send(event) }
    }

    private func send(_ event: TransportEvent) {
        deliver?(event)
        if case .completed = event { deliver = nil }
    }

    /// Keeps events back from now on: a caller's thread is about to drive libcurl.
    func holdEvents() { if held == nil { held = [] } }

    /// Stops keeping events back; true when some were kept or the body was left for the loop
    /// (they stay held until `releaseEvents`).
    func stopHolding() -> Bool {
        if held?.isEmpty == false || pausedWhileHeld { return true }
        held = nil
        return false
    }

    /// Delivers the events kept back, in order, lets the next ones go out as they come, and
    /// resumes a transfer paused on a caller's thread: its body is read here (the loop thread).
    func releaseEvents(curl: LibCurl) {
        guard let kept = held else { return }
        held = nil
        kept.forEach(send)
        guard pausedWhileHeld else { return }
        pausedWhileHeld = false
        if let easy { _ = curl.easyPause(easy, LibCurl.pauseNothing) }
    }

    // MARK: The end (loop thread)

    /// Completes the exchange once: with the transfer's result code, or with `error`.
    func finish(code: Int32, curl: LibCurl, error: URLError? = nil) {
        guard !isFinished else { return }
        isFinished = true
        let closeError = file?.finish()
        release(curl)
        if let error = error ?? failure { return events(.completed(error)) }
        if code == LibCurl.pinMismatch, let host = request.urlRequest.url?.host {
            return events(.completed(TLSFailure.pinMismatch(host: host, detail: errorText)))
        }
        guard code == 0 else { return events(.completed(curl.urlError(code, detail: errorText))) }
        guard head != nil else { return events(.completed(URLError(.badServerResponse))) }
        if let body, !body.isEmpty { events(.data(body)) }
        body = nil
        if let easy {
            let measured = Self.metrics(easy, curl: curl, origin: origin, bytesReceived: received)
            spokeHTTP2 = measured.httpVersion == "HTTP/2"
            events(.metrics(measured))
        }
        events(.completed(closeError))
    }

    private var errorText: String { String(cString: errorBuffer) }

    private func release(_ curl: LibCurl) {
        headerList = nil
        bodyStream?.close()
        whenBodyReadable = nil
        if upload >= 0 { close(upload) }
        upload = -1
    }
}
#endif
