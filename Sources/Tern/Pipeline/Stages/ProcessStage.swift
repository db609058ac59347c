import Foundation

/// Stage 8 of `Call.swift`: validation and decoding, and where they run.
///
/// Small bodies through Tern's own serializers are processed on the thread that produced them —
/// the transport's, or the cache reader's — because a hop costs more than the work. Anything that
/// may be slow leaves that thread, so one slow response never delays the others of the client
/// (for `URLSessionTransport` every response of a client arrives on one serial queue; a libcurl
/// event loop would stall every transfer): a custom serializer (user code), a `Decodable` of a
/// body over `ProcessingThresholds.decodable`, any body over `ProcessingThresholds.inline`, and a
/// network response that may be written to disk or checked by a store predicate.
extension Call {
    /// Validates and decodes an outcome into the request's response.
    func process(
        _ outcome: Result<RawResponse, TernError>, route: RequestCore.Route, validating: Bool = true
    )
        -> Result<Response<Value>, TernError>
    {
        outcome.flatMap { raw in
            Result { () throws(TernError) -> Response<Value> in
                if validating {
                    try options.validation.validate(
                        raw.head, body: raw.data, serializerTypes: serializer.acceptableContentTypes, method: core.method.rawValue)
                }
                if let download, raw.source == .network, let file = try download.complete(raw.response) as? Value {
                    return makeResponse(raw, value: file, route: route)
                }
                let value = try serializer.value(from: raw.data, head: raw.head, method: core.method)
                return makeResponse(raw, value: value, route: route)
            }
        }
    }

    /// The response for `raw` decoded as `value`, from the current attempt of `route` (nil: the
    /// cache answered without one).
    func makeResponse(_ raw: RawResponse, value: Value, route: RequestCore.Route?) -> Response<Value> {
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started.uptime) / 1e9
        var metrics = raw.metrics
        if let route, !route.redirects.isEmpty { metrics?.redirectTime = route.redirectTime }
        return Response(
            request: urlRequest, head: raw.head, data: raw.data, value: value,
            timing: Timing(start: started.date, duration: seconds), source: raw.source,
            attempt: route?.attempt ?? 0, redirects: route?.redirects ?? [], metrics: metrics)
    }

    /// Whether processing `outcome` should leave the current thread.
    func processesElsewhere(_ outcome: Result<RawResponse, TernError>) -> Bool {
        if let hooks, hooks.hasResponseHooks { return true }  // user code
        if download != nil { return true }  // a file to hash and move
        guard case .success(let raw) = outcome else { return false }
        if raw.source == .network, let plan, plan.mayBeSlowToStore { return true }
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
