import Foundation

/// Stage 8 of `Call.swift`: validation and decoding, and where they run — a value built from
/// the call's options, tested on its own (`ProcessStageTests`).
///
/// Small bodies through Tern's own serializers are processed on the thread that produced them —
/// the transport's, or the cache reader's — because a hop costs more than the work. Anything that
/// may be slow leaves that thread, so one slow response never delays the others of the client
/// (for `URLSessionTransport` every response of a client arrives on one serial queue; a libcurl
/// event loop would stall every transfer): a custom serializer (user code), a `Decodable` of a
/// body over `ProcessingThresholds.decodable`, any body over `ProcessingThresholds.inline`, and a
/// network response that may be written to disk or checked by a store predicate.
struct ProcessStage<Value: Sendable> {
    let serializer: ResponseSerializer<Value>
    let validation: ResponseValidation
    let method: HTTPMethod
    let destination: ResponseDestination
    /// The request as prepared, and when its call started: what every response reports.
    let request: URLRequest
    let started: (date: Date, uptime: UInt64)

    /// Validates (unless a rule already accepted it) and decodes an outcome into the response
    /// of `route`'s attempt (nil: the cache answered without one).
    func process(
        _ outcome: Result<RawResponse, TernError>, route: CallStateMachine.Route?, validating: Bool = true
    )
        -> Result<Response<Value>, TernError>
    {
        outcome.flatMap { raw in
            Result { () throws(TernError) -> Response<Value> in
                if validating {
                    try validation.validate(
                        raw.head, body: raw.data, serializerTypes: serializer.acceptableContentTypes, method: method.rawValue)
                }
                if let file = try destination.completedFile(raw) as? Value {
                    return response(raw, value: file, route: route)
                }
                return response(raw, value: try serializer.value(from: raw.data, head: raw.head, method: method), route: route)
            }
        }
    }

    /// The response for `raw` decoded as `value`, from the current attempt of `route` (nil: the
    /// cache answered without one).
    func response(_ raw: RawResponse, value: Value, route: CallStateMachine.Route?) -> Response<Value> {
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptime) / 1e9
        var metrics = raw.metrics
        if let route, !route.redirects.isEmpty { metrics?.redirectTime = route.redirectTime }
        return Response(
            request: request, head: raw.head, data: raw.data, value: value,
            timing: Timing(start: started.date, duration: seconds), source: raw.source,
            attempt: route?.attempt ?? 0, redirects: route?.redirects ?? [], metrics: metrics)
    }

    /// Whether processing `outcome` should leave the current thread: user code runs (response
    /// hooks, a custom serializer), a file is hashed and moved, a store may be slow, or the body
    /// is over its threshold.
    func runsElsewhere(_ outcome: Result<RawResponse, TernError>, hasResponseHooks: Bool, mayBeSlowToStore: Bool) -> Bool {
        if hasResponseHooks { return true }
        if case .file = destination { return true }
        guard case .success(let raw) = outcome else { return false }
        if raw.source == .network, mayBeSlowToStore { return true }
        switch serializer.kind {
        case .custom: return true
        case .decodable: return raw.data.count > ProcessingThresholds.decodable
        case .builtIn: return raw.data.count > ProcessingThresholds.inline
        }
    }
}

/// Body sizes above which decoding leaves the transport's thread.
///
/// Measured with `tern-bench --micro` (release, this 2-core VM): a hop to a global queue and back
/// costs about 8 µs; Tern's JSON parser takes about 13 µs per KB (170 µs for 12 KB, 690 µs for
/// 53 KB). Inline always costs less CPU and latency for the response itself; the price is the
/// time every other response of the client waits behind it. Up to 16 KB that wait stays near
/// 0.2 ms (about 25 hops' worth); beyond it, the hop is the cheaper side.
enum ProcessingThresholds {
    /// Tern's own serializers (data, string, JSON).
    static let inline = 16 << 10
    /// `Decodable` through `JSONDecoder`, several times slower per byte than Tern's parser.
    static let decodable = 4 << 10
}
