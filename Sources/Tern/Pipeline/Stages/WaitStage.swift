import Foundation

/// The waits between attempts (per call, after the retry stage or a rule): a backoff delay
/// before a retry, or a hold at a `RestartGate` until it restarts the request or drops it. Both
/// are cancellable; a backoff runs under the request's deadline, a hold does not (it may last as
/// long as a user takes to log in). The next attempt sends the request as it was before its
/// adapters, so they run again.
extension Call {
    /// Waits `delay` seconds (cancellable, under the deadline), then makes the next attempt.
    func retry(after delay: TimeInterval, from route: Route, error: TernError?) {
        guard wait(.beforeNextAttempt) else { return }
        if let error { observers.record(.retrying(attempt: route.attempt, delay: delay, error: error)) }
        Self.processingQueue.asyncAfter(deadline: .now() + delay) { [self] in startOver(after: route) }
    }

    /// Stops the request at `gate` until it restarts it (a new attempt) or drops it (that error).
    func hold(at gate: RestartGate, after route: Route) {
        guard wait(gate.isOneShot ? .credential : .suspended) else { return }
        observers.record(.held(attempt: route.attempt))
        gate.hold(isOver: { [self] in hasEnded }) { [self] outcome in
            switch outcome {
            case .success: startOver(after: route)
            case .failure(let error): fail(error)
            }
        }
    }

    /// The wait after `route`'s attempt is over: the next attempt sends that request again, as it
    /// was before its adapters — unless a cancel or the deadline ended the request meanwhile.
    func startOver(after route: Route) {
        guard resume() else { return }
        startAttempt(route.unadapted ?? urlRequest, after: route.attempt)
    }
}
