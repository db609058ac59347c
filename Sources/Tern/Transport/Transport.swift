import Foundation

/// The seam between a `Client` and the thing that moves bytes: the platform's default
/// (`URLSessionTransport` on Apple platforms, `CurlTransport` on Linux), a stub in tests, or one
/// of your own.
///
/// A transport moves bytes and nothing else: it never follows redirects unless asked
/// (`TransportRequest.followsRedirects`; Tern never asks, it follows them itself, the same on every
/// platform), never decodes, and speaks Foundation value types only. For each `start` it reports,
/// in order and never concurrently for the same request: zero or more `.head` events (each new
/// response — after an auth retry, say — replaces the previous one and its body), `.data` chunks
/// (or `.receiving` counts and the whole body at the end), `.sentBytes` progress and at most one
/// `.metrics`, then exactly one `.completed`, never followed by anything. It must never create work after `invalidate()`; `start` then returns nil.
/// Thread safety: implementations must be safe to call from any thread.
public protocol Transport: Sendable {
    /// Starts one exchange and reports it to `events`.
    /// - Parameters:
    ///   - request: What to send, where its body comes from and where the response goes. The
    ///     `URLRequest`'s `timeoutInterval` is the caller's idle timeout in seconds; the client
    ///     enforces it (and any deadline) itself, so the transport may use a longer one.
    ///   - events: Receives the exchange's events; retained until `.completed` has been sent.
    /// - Returns: A task that can cancel the exchange, or nil if the transport has been invalidated.
    func start(_ request: TransportRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)?

    /// Cancels everything in flight and refuses new work. Cancelled exchanges complete with
    /// `URLError(.cancelled)`.
    func invalidate()

    /// Whether `TransportTask.suspend()` really stops reading a response (back-pressure for a
    /// slow stream reader). Default false.
    var pausesExchanges: Bool { get }

    /// Whether the transport itself sends the client's wire headers (`User-Agent`,
    /// `Accept-Encoding`, `Accept-Language`: `TransportSettings.wireHeaders`) on every request
    /// that does not set them. Default false: the client then puts them in each `URLRequest`, so a
    /// stub or custom transport sees the headers the wire would carry.
    var sendsWireHeaders: Bool { get }
}

extension Transport {
    /// False: this transport reads on whatever its tasks are told.
    public var pausesExchanges: Bool { false }

    /// False: the client adds the wire headers to each request.
    public var sendsWireHeaders: Bool { false }
}

/// One exchange as a transport sees it: the request, where its body comes from, where the
/// response body goes, and how to deliver it.
/// Thread safety: a value type, safe to share.
public struct TransportRequest: Sendable {
    /// Where the request body comes from.
    public enum Body: Sendable, Equatable {
        /// No body.
        case none
        /// These bytes.
        case data(Data)
        /// The contents of a file, streamed from disk (large uploads).
        case file(URL)
        /// Bytes produced while they are sent: read them as the connection takes them, with
        /// `Content-Length` when the stream's `length` is known, else chunked (HTTP/1.1) or in
        /// DATA frames (HTTP/2). Close the stream when the exchange ends. It cannot be rewound:
        /// a transport that must send the body again (an authentication challenge) fails the
        /// exchange instead.
        case stream(RequestBodyStream)

        /// Same bytes, same file, or the same stream.
        public static func == (lhs: Body, rhs: Body) -> Bool {
            switch (lhs, rhs) {
            case (.none, .none): true
            case (.data(let a), .data(let b)): a == b
            case (.file(let a), .file(let b)): a == b
            case (.stream(let a), .stream(let b)): a === b
            default: false
            }
        }
    }

    /// Where the response body goes.
    public enum Destination: Sendable, Equatable {
        /// Into memory, delivered as `.data` events; with a limit, a body longer than `limit` bytes
        /// ends the exchange with `URLError(.dataLengthExceedsMaximum)`.
        case memory(limit: Int?)
        /// Into a file, for a successful (2xx) response only: a 206 Partial Content body is
        /// written from byte `offset` on (resuming a download), any other 2xx body replaces the
        /// file from byte 0. The transport writes each chunk, then still reports it as `.data` for
        /// progress; the receiver counts such chunks and does not keep them. The body of any
        /// other status is not written: it arrives as `.data` like `.memory(limit: nil)`.
        case file(URL, offset: Int64)
    }

    /// The request line and headers (its `httpBody` is always nil: the body is in `body`).
    public var urlRequest: URLRequest
    /// Where the body comes from. Default: the `URLRequest`'s `httpBody`, if any.
    public var body: Body
    /// Where the response body goes. Default: memory, without a limit.
    public var destination: Destination
    /// Whether the body should arrive chunk by chunk as it comes in (someone watches progress)
    /// rather than once at the end. Default false; a transport may always stream.
    public var streamsBody: Bool
    /// Whether the transport should follow redirects itself. Default false: a 3xx response is
    /// handed back as it is, and Tern decides.
    public var followsRedirects: Bool
    /// The connection this exchange opens, when it is an upgrade (a WebSocket's): it runs on the
    /// connection it keeps, not on the transport's own exchanges.
    var upgrade: (any ConnectionUpgrade)?

    /// The key of a `URLError`'s `userInfo` that carries the `TernError` an exchange failed with
    /// (a broken upgrade handshake, a transport without sockets), which its call fails with.
    static let failureKey = "TernExchangeFailure"

    /// Creates a transport request; a body set on `urlRequest` moves into `body`.
    public init(
        _ urlRequest: URLRequest, destination: Destination = .memory(limit: nil), streamsBody: Bool = false,
        followsRedirects: Bool = false
    ) {
        if let data = urlRequest.httpBody {
            var bodiless = urlRequest
            bodiless.httpBody = nil
            self.urlRequest = bodiless
            self.body = .data(data)
        } else {
            self.urlRequest = urlRequest
            self.body = .none
        }
        self.destination = destination
        self.streamsBody = streamsBody
        self.followsRedirects = followsRedirects
    }

    /// The `URLRequest` with an in-memory body put back, as the wire sees it (for stubs and logs).
    public var urlRequestWithBody: URLRequest {
        guard case .data(let data) = body else { return urlRequest }
        var request = urlRequest
        request.httpBody = data
        return request
    }
}

/// One exchange in flight inside a transport.
/// Thread safety: implementations must be safe to call from any thread.
public protocol TransportTask: Sendable {
    /// Stops the exchange; the transport then completes it with `URLError(.cancelled)`, unless it
    /// already completed. Calling it more than once has no further effect.
    func cancel()
    /// Stops reading the response for now (a streamed body's reader has fallen behind); the
    /// exchange's deadline is the caller's business. Optional: the default does nothing, and a
    /// reader then buffers what arrives.
    func suspend()
    /// Reads the response again after `suspend()`. Optional: the default does nothing.
    func resume()
    /// Runs `body` once the events this exchange has already received are delivered: before an
    /// idle timeout fails an exchange, the client hears out what was on its way. A transport that
    /// hands events to a queue of its own, which a busy process can hold up for seconds,
    /// implements it; the default runs `body` at once.
    func afterPendingEvents(_ body: @escaping @Sendable () -> Void)
}

extension TransportTask {
    /// Does nothing: this transport cannot pause an exchange.
    public func suspend() {}
    /// Does nothing: this transport cannot pause an exchange.
    public func resume() {}
    /// Runs `body` at once: this transport delivers each event as it happens.
    public func afterPendingEvents(_ body: @escaping @Sendable () -> Void) { body() }
}

/// What a transport reports about one exchange.
/// Thread safety: a value type, safe to share.
public enum TransportEvent: Sendable {
    /// Response headers arrived; discard any body received before. A transport that has an
    /// `HTTPURLResponse` wraps it (`ResponseHead(_:)`); one that parses headers itself builds
    /// the head from them, and Foundation's `HTTPURLResponse` is made only if someone asks.
    case head(ResponseHead)
    /// A chunk of the (decompressed) body.
    case data(Data)
    /// Bytes of the body received so far, from a transport that hands the body over whole at the
    /// end: a sign of life for the idle timeout (which counts from the last event of any kind) and
    /// the download progress until the body arrives. Such a transport should send one now and then
    /// (a few times a second at most) while the body comes in; one that sends `.data` as it goes
    /// needs none. The body's final `.data` is not counted again.
    case receiving(Int64)
    /// Upload progress: bytes of the body sent so far, and the total if known.
    case sentBytes(Int64, expected: Int64?)
    /// How the exchange went, once, before `.completed`. Optional: Tern measures what it can
    /// itself for a transport that sends none (`Metrics.Source.tern`).
    case metrics(Metrics)
    /// The exchange ended: `nil` after a complete response, otherwise the failure.
    case completed(URLError?)
}

/// An exchange that opens a connection of its own instead of the transport's request path: a
/// WebSocket's upgrade. Its call reports to `observer`, in place of the client's monitors and
/// tracer (the socket tells its own beginning and end).
protocol ConnectionUpgrade: Sendable {
    /// Who the call is observed by, besides the client's metrics.
    var observer: (any CallObserver)? { get }
    /// Opens the connection for `request` on `transport` and reports the answer to `events`.
    func start(
        _ request: TransportRequest, on transport: any Transport, events: @escaping @Sendable (TransportEvent) -> Void
    ) -> (any TransportTask)?
}
