import Foundation

/// Makes a span for each request of a client (`ClientConfiguration.tracer`): Tern sends the span's
/// `TraceContext` as `traceparent` (and `tracestate`) with every attempt, tells the span what
/// happens to the request (attempts, redirects, retries, failures), and ends it once.
///
/// Tern does not depend on a tracing library. `TraceContextTracer` is a complete tracer of its
/// own (ids, parents from `TraceContext.current`, finished spans to a closure); to feed
/// swift-distributed-tracing or OpenTelemetry, adopt this protocol in a few lines that start
/// their span and read its ids (see the Server-Side Use article).
/// Thread safety: called from any thread; must be `Sendable`.
public protocol RequestTracer: Sendable {
    /// A span for `request`, about to start; its parent is `request.parent` when there is one.
    func startSpan(for request: TracedRequest) -> any RequestSpan
}

/// A request's span, as Tern drives it.
/// Thread safety: events come from Tern's threads, one at a time and in order for one request;
/// keep each call quick.
public protocol RequestSpan: Sendable {
    /// The context every attempt of the request sends.
    var context: TraceContext { get }
    /// Something happened to the request (an attempt started, a redirect, a retry …).
    func record(_ event: RequestEvent.Kind, at date: Date)
    /// The request ended, however it ended (a silent cancellation too); called once.
    func end(_ outcome: RequestOutcome)
}

/// What a tracer knows of a request when its span starts.
/// Thread safety: a value type, safe to share.
public struct TracedRequest: Sendable {
    /// The request's number, unique in the process (`RequestHandle.id`).
    public let requestID: UInt64
    /// The request's method.
    public let method: HTTPMethod
    /// The request's URL as prepared.
    public let url: URL?
    /// The request's tags.
    public let tags: Set<String>
    /// The context the request continues (`TraceContext.current` where it was sent), if any.
    public let parent: TraceContext?

    /// A span name as OpenTelemetry's HTTP conventions have it: the method alone (`GET`).
    public var spanName: String { method.rawValue }
}

/// The span of one request as an observer of its call: its trace context on every attempt, every
/// event recorded, and an end that happens once (`.finished`, or a silent cancellation).
/// Thread safety: safe to use from any thread.
final class SpanObserver: CallObserver {
    let span: any RequestSpan
    /// `traceparent` and `tracestate`, worked out once.
    private let traceparent: String
    private let tracestate: String?
    private let ended = Locked(false)

    /// A span of `tracer` for the request `request`.
    init(_ tracer: any RequestTracer, for request: TracedRequest) {
        span = tracer.startSpan(for: request)
        let context = span.context
        traceparent = context.traceparent
        tracestate = context.traceState
    }

    func willSend(_ request: URLRequest) -> URLRequest {
        var traced = request
        traced.setValue(traceparent, forHTTPHeaderField: "traceparent")
        traced.setValue(tracestate, forHTTPHeaderField: "tracestate")
        return traced
    }

    func record(_ event: RequestEvent.Kind) {
        if case .finished(let outcome) = event { return end(outcome) }
        span.record(event, at: Date())
    }

    func endedSilently(_ outcome: RequestOutcome) { end(outcome) }

    /// Ends the span unless it ended already.
    private func end(_ outcome: RequestOutcome) {
        let first = ended.withLock { ended -> Bool in
            defer { ended = true }
            return !ended
        }
        if first { span.end(outcome) }
    }
}
