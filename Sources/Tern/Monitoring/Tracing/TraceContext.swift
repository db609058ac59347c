import Foundation

/// A W3C Trace Context (`traceparent` and `tracestate`): which trace a request belongs to, and
/// which span sent it. Tern sends it with every attempt of a request when the client has a
/// `RequestTracer`.
///
/// A server handler that received a `traceparent` makes its outgoing requests part of the same
/// trace by reading it and setting `TraceContext.current` around its work:
/// `TraceContext.$current.withValue(TraceContext(traceparent: incoming)) { … }`.
/// Thread safety: a value type, safe to share.
public struct TraceContext: Sendable, Hashable, CustomStringConvertible {
    /// The trace's id: 32 lowercase hexadecimal digits, not all zero.
    public let traceID: String
    /// The span's id: 16 lowercase hexadecimal digits, not all zero.
    public let spanID: String
    /// Whether the trace is recorded (the `sampled` flag).
    public var isSampled: Bool
    /// Vendor-specific trace data (`tracestate`), passed along as it came; nil for none.
    public var traceState: String?

    /// The context the current task's requests continue, if any: a request started while it is
    /// set gets a span of its trace, with it as the parent.
    @TaskLocal public static var current: TraceContext?

    /// A context from a received `traceparent` (version `00`, or a later one read as `00`) and
    /// its `tracestate`; nil when the `traceparent` is malformed (W3C: then start a new trace).
    public init?(traceparent: String, tracestate: String? = nil) {
        let fields = traceparent.split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count >= 4, fields[0].count == 2, fields[0] != "ff", Self.isHex(fields[0]),
            fields[1].count == 32, Self.isHex(fields[1]), fields[1].contains(where: { $0 != "0" }),
            fields[2].count == 16, Self.isHex(fields[2]), fields[2].contains(where: { $0 != "0" }),
            fields[3].count == 2, Self.isHex(fields[3]), let flags = UInt8(fields[3], radix: 16),
            fields[0] != "00" || fields.count == 4
        else { return nil }
        traceID = String(fields[1])
        spanID = String(fields[2])
        isSampled = flags & 1 == 1
        traceState = tracestate.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A context with these ids (lowercase hexadecimal: 32 digits, then 16).
    public init(traceID: String, spanID: String, isSampled: Bool = true, traceState: String? = nil) {
        self.traceID = traceID
        self.spanID = spanID
        self.isSampled = isSampled
        self.traceState = traceState
    }

    /// A new trace, with a random trace id and span id.
    public static func newTrace(isSampled: Bool = true) -> TraceContext {
        TraceContext(traceID: randomHex(bytes: 16), spanID: randomHex(bytes: 8), isSampled: isSampled)
    }

    /// A span of the same trace under this one: a new span id, the same flags and state.
    public func child() -> TraceContext {
        TraceContext(traceID: traceID, spanID: Self.randomHex(bytes: 8), isSampled: isSampled, traceState: traceState)
    }

    /// The `traceparent` header's value: `00-<trace id>-<span id>-<flags>`.
    public var traceparent: String { "00-\(traceID)-\(spanID)-\(isSampled ? "01" : "00")" }

    /// The `traceparent` value.
    public var description: String { traceparent }

    private static func isHex(_ text: Substring) -> Bool {
        text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
    }

    /// `bytes` random bytes as lowercase hexadecimal, never all zero.
    static func randomHex(bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        let digits = Array("0123456789abcdef".utf8)
        while true {
            var text = [UInt8]()
            text.reserveCapacity(bytes * 2)
            var nonZero = false
            for _ in 0..<bytes {
                let byte = UInt8.random(in: 0...255, using: &generator)
                nonZero = nonZero || byte != 0
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 15)])
            }
            if nonZero { return String(decoding: text, as: UTF8.self) }
        }
    }
}
