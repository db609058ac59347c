import Foundation

/// A tracer of Tern's own: each request gets a span of the trace in `TraceContext.current` (or a
/// new trace), sent as `traceparent` / `tracestate`, and its finished span — the request's
/// attempts, redirects and retries as events — goes to `onEnd` (to log it, or hand it to the
/// exporter you have).
/// ```swift
/// configuration.tracer = TraceContextTracer { span in print(span) }
/// ```
/// Thread safety: safe to share; `onEnd` is called on the thread that ended the request.
public struct TraceContextTracer: RequestTracer {
    /// Whether a request that continues no trace starts a sampled one. Default true.
    public var samplesNewTraces: Bool
    private let onEnd: @Sendable (FinishedSpan) -> Void

    /// A tracer that hands each finished span to `onEnd`.
    public init(samplesNewTraces: Bool = true, onEnd: @escaping @Sendable (FinishedSpan) -> Void = { _ in }) {
        self.samplesNewTraces = samplesNewTraces
        self.onEnd = onEnd
    }

    /// A span under `request.parent`, or the first span of a new trace.
    public func startSpan(for request: TracedRequest) -> any RequestSpan {
        let context = request.parent?.child() ?? .newTrace(isSampled: samplesNewTraces)
        return Span(
            start: FinishedSpan(
                name: request.spanName, context: context, parentSpanID: request.parent?.spanID, method: request.method,
                url: request.url, started: Date()),
            onEnd: onEnd)
    }

    private final class Span: RequestSpan {
        let context: TraceContext
        private let span: Locked<FinishedSpan>
        private let onEnd: @Sendable (FinishedSpan) -> Void

        init(start: FinishedSpan, onEnd: @escaping @Sendable (FinishedSpan) -> Void) {
            context = start.context
            span = Locked(start)
            self.onEnd = onEnd
        }

        func record(_ event: RequestEvent.Kind, at date: Date) {
            guard let named = FinishedSpan.Event(event, at: date) else { return }
            span.withLock { $0.events.append(named) }
        }

        func end(_ outcome: RequestOutcome) {
            let finished = span.withLock { span -> FinishedSpan in
                span.ended = Date()
                span.statusCode = outcome.statusCode
                span.error = outcome.error
                return span
            }
            onEnd(finished)
        }
    }
}

/// A request's span as `TraceContextTracer` hands it over once the request ended.
/// Thread safety: a value type, safe to share.
public struct FinishedSpan: Sendable, CustomStringConvertible {
    /// The span's name (the method, as OpenTelemetry's HTTP conventions have it).
    public let name: String
    /// The context the request sent.
    public let context: TraceContext
    /// The span id of the parent, nil for the first span of a trace.
    public let parentSpanID: String?
    /// The request's method.
    public let method: HTTPMethod
    /// The request's URL as prepared.
    public let url: URL?
    /// When the request started.
    public let started: Date
    /// When it ended (set before the span is handed over).
    public internal(set) var ended: Date?
    /// The delivered response's status, if one was delivered.
    public internal(set) var statusCode: Int?
    /// The error, if the request failed.
    public internal(set) var error: TernError?
    /// What happened on the way, in order.
    public internal(set) var events: [Event] = []

    init(name: String, context: TraceContext, parentSpanID: String?, method: HTTPMethod, url: URL?, started: Date) {
        self.name = name
        self.context = context
        self.parentSpanID = parentSpanID
        self.method = method
        self.url = url
        self.started = started
    }

    /// One event of a span: a name, when, and what it says.
    public struct Event: Sendable {
        /// `attempt`, `redirect`, `retry`, `attempt failed`, `held`, `cancelled` or `cache hit`.
        public let name: String
        /// When it happened.
        public let date: Date
        /// Details, as text: `attempt`, `status`, `location`, `delay`, `error`, `reason`.
        public let attributes: [String: String]

        /// The event a request event becomes; nil for those a span does not keep (progress,
        /// cache bookkeeping).
        init?(_ kind: RequestEvent.Kind, at date: Date) {
            self.date = date
            switch kind {
            case .attemptStarted(let attempt, let request):
                (name, attributes) = ("attempt", ["attempt": String(attempt), "url": Redaction.shared.url(request.url)])
            case .redirected(let redirect):
                (name, attributes) = ("redirect", ["status": String(redirect.statusCode), "location": Redaction.shared.url(redirect.to)])
            case .attemptFailed(let attempt, let error):
                (name, attributes) = ("attempt failed", ["attempt": String(attempt), "error": error.description])
            case .retrying(let attempt, let delay, let error):
                (name, attributes) = ("retry", ["attempt": String(attempt), "delay": String(delay), "error": error.description])
            case .held(let attempt):
                (name, attributes) = ("held", ["attempt": String(attempt)])
            case .cancelled(let reason):
                (name, attributes) = ("cancelled", ["reason": reason.description])
            case .cacheHit(let source):
                (name, attributes) = ("cache hit", ["source": "\(source)"])
            case .created, .responseReceived, .cacheMiss, .cacheStored, .progress, .finished:
                return nil
            }
        }
    }

    /// One line: the span's ids, name, status or error, duration and events.
    public var description: String {
        let duration = ended.map { String(format: "%.1f ms", $0.timeIntervalSince(started) * 1000) } ?? "open"
        let result = statusCode.map(String.init) ?? error.map { "\($0)" } ?? "-"
        return "\(context.traceparent) parent=\(parentSpanID ?? "-") \(name) \(Redaction.shared.url(url)) → \(result) in \(duration)"
            + (events.isEmpty ? "" : "; " + events.map(\.name).joined(separator: ", "))
    }
}
