import Foundation

/// Receives every event of every request of the clients it is installed on
/// (`ClientConfiguration.monitors`): to log, measure, or debug what requests do.
///
/// Each monitor gets its events on its own `queue`, in the order they happened for one request.
/// A client without monitors does not build a single event.
/// Thread safety: called on `queue`; must be `Sendable`.
public protocol EventMonitor: Sendable {
    /// Where this monitor's events are delivered; a serial queue keeps one request's events in order.
    var queue: DispatchQueue { get }
    /// One event of one request.
    func receive(_ event: RequestEvent)
}

/// Something that happened to a request.
/// Thread safety: a value type, safe to share.
public struct RequestEvent: Sendable {
    /// The request's number, unique in the process (`RequestHandle.id`).
    public let requestID: UInt64
    /// The request's method.
    public let method: HTTPMethod
    /// The request's URL as prepared (after parameter and URL hooks).
    public let url: URL?
    /// The request's tags.
    public let tags: Set<String>
    /// When it happened.
    public let date: Date
    /// What happened.
    public let kind: Kind

    /// What happened to a request.
    public enum Kind: Sendable {
        /// The request was prepared (hooks applied) and admitted: this is what it sends.
        case created(URLRequest)
        /// An attempt went to the transport (after its adapters).
        case attemptStarted(attempt: Int, request: URLRequest)
        /// A redirect was followed: the next attempt goes to `to`.
        case redirected(Redirect)
        /// An attempt's response is complete (before validation and decoding).
        case responseReceived(attempt: Int, response: HTTPURLResponse, bytes: Int)
        /// An attempt failed in the transport (before the retry policy).
        case attemptFailed(attempt: Int, error: TernError)
        /// A failed attempt will be tried again after `delay` seconds.
        case retrying(attempt: Int, delay: TimeInterval, error: TernError)
        /// A response rule stopped the request at a gate until it is restarted or dropped.
        case held(attempt: Int)
        /// The cache answered (a cached, revalidated or stale response).
        case cacheHit(ResponseSource)
        /// The cache was asked and had no usable entry.
        case cacheMiss
        /// The response was written to the cache.
        case cacheStored
        /// Bytes went up or came down.
        case progress(TransferProgress)
        /// The request was cancelled for `reason`.
        case cancelled(TernError.CancellationReason)
        /// The request ended; its result and metrics. Not sent for a cancellation reported silently.
        case finished(RequestOutcome)
    }
}

/// How a request ended, for monitors.
/// Thread safety: a value type, safe to share.
public struct RequestOutcome: Sendable {
    /// The status code of the delivered response, if one was delivered.
    public let statusCode: Int?
    /// The error, if it failed.
    public let error: TernError?
    /// Where the delivered response came from.
    public let source: ResponseSource?
    /// Seconds from `send` to the end.
    public let duration: TimeInterval
    /// The attempts made (redirects, retries and restarts included).
    public let attempts: Int
    /// The redirects followed.
    public let redirects: Int
    /// The body size of the delivered response in bytes.
    public let bytes: Int
    /// The delivered response's body, for loggers that print bodies (nil on failure: see `error`).
    public let body: Data?
}

/// A client's event monitors as one observer of a call: each event goes to every monitor's queue.
/// Thread safety: a value type of Sendable values, safe to share.
struct MonitorSink: CallObserver {
    let monitors: [any EventMonitor]
    let requestID: UInt64
    let method: HTTPMethod
    let url: URL?
    let tags: Set<String>

    func record(_ kind: RequestEvent.Kind) {
        let event = RequestEvent(requestID: requestID, method: method, url: url, tags: tags, date: Date(), kind: kind)
        for monitor in monitors { monitor.queue.async { monitor.receive(event) } }
    }
}
