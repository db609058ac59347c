import Foundation

/// Told what happens to a call, where it happens: the client's event monitors, its tracer's span
/// and its metrics are each one (built in `Client+Observers.swift`). A stage reports each fact
/// once, to every observer of the call.
/// Thread safety: called from the call's threads, one fact at a time and in order for one call.
protocol CallObserver: Sendable {
    /// Whether it reads `record(_:)`'s events; when no observer does, no event is built.
    var wantsEvents: Bool { get }
    /// An attempt is about to go out as `request`: what it sends (a span adds its trace
    /// context). Asked of observers that read events.
    func willSend(_ request: URLRequest) -> URLRequest
    /// Something happened to the call, as monitors see it.
    func record(_ event: RequestEvent.Kind)
    /// An exchange ended, having moved these bytes; `reused`: whether its connection was reused
    /// (nil: the transport did not say). Also after the request ended (a cancelled exchange).
    func exchangeEnded(sent: Int64, received: Int64, reused: Bool?)
    /// The request ended with `error` (nil: success) after `seconds`: once per call, at its
    /// cancellation or its delivery, whether or not it is reported.
    func requestEnded(_ error: TernError?, seconds: TimeInterval)
    /// The call ended without telling `.finished` (a cancellation reported silently): how.
    func endedSilently(_ outcome: RequestOutcome)
}

extension CallObserver {
    var wantsEvents: Bool { true }
    func willSend(_ request: URLRequest) -> URLRequest { request }
    func record(_ event: RequestEvent.Kind) {}
    func exchangeEnded(sent: Int64, received: Int64, reused: Bool?) {}
    func requestEnded(_ error: TernError?, seconds: TimeInterval) {}
    func endedSilently(_ outcome: RequestOutcome) {}
}

/// The observers of one call, built once when it is made. The first is kept apart from the
/// others: a call with one observer (the client's metrics, commonly) allocates no list.
/// Thread safety: a value type of Sendable observers, safe to share.
struct CallObservers: Sendable {
    private let first: (any CallObserver)?
    private let others: [any CallObserver]
    /// Whether an observer reads events: without one, none is built.
    let wantEvents: Bool

    init(_ observers: [any CallObserver]) {
        first = observers.first
        others = Array(observers.dropFirst())
        wantEvents = observers.contains { $0.wantsEvents }
    }

    init(_ observer: (any CallObserver)?) {
        first = observer
        others = []
        wantEvents = observer?.wantsEvents ?? false
    }

    private func forEach(_ body: (any CallObserver) -> Void) {
        if let first { body(first) }
        for observer in others { body(observer) }
    }

    /// The request an attempt sends, as every observer that reads events leaves it.
    func willSend(_ request: URLRequest) -> URLRequest {
        guard wantEvents else { return request }
        var request = request
        forEach { if $0.wantsEvents { request = $0.willSend(request) } }
        return request
    }

    /// Tells `event`, built only when an observer reads events.
    func record(_ event: @autoclosure () -> RequestEvent.Kind) {
        guard wantEvents else { return }
        let event = event()
        forEach { if $0.wantsEvents { $0.record(event) } }
    }

    func exchangeEnded(sent: Int64, received: Int64, reused: Bool?) {
        forEach { $0.exchangeEnded(sent: sent, received: received, reused: reused) }
    }

    func requestEnded(_ error: TernError?, seconds: TimeInterval) {
        forEach { $0.requestEnded(error, seconds: seconds) }
    }

    func endedSilently(_ outcome: @autoclosure () -> RequestOutcome) {
        guard wantEvents else { return }
        let outcome = outcome()
        forEach { if $0.wantsEvents { $0.endedSilently(outcome) } }
    }
}
