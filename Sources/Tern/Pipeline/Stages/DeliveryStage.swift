import Foundation

/// The delivery stage (per call): the terminal result, exactly once, on the callback queue —
/// never inside `send`, never after a cancel won, never to a released owner — after any
/// main-thread preprocessing; and a cache-then-network hit before it.
extension Call {
    /// Delivers a processed result on the callback queue, claimed when its callback runs: never
    /// inside `send`, never after a cancel won, never to a released owner.
    func deliver(_ result: Result<Response<Value>, TernError>, context: ResponseContext? = nil) {
        if let main = hooks?.mainThreadPreprocessors, !main.isEmpty {
            // The main-thread preprocessors, then the callback on its queue (inline on main).
            Task { @MainActor [self] in
                guard !hasEnded else { return }
                hand(ResponseHooksStage.preprocessOnMain(result, context: context, with: main), claim: .onDelivery)
            }
        } else {
            hand(result, claim: .onDelivery)
        }
    }

    /// Runs the completion with `result` on the callback queue, if `claim` allows; `later`: never
    /// inline, even on that queue (the caller is inside one of Tern's calls). A processed result
    /// asks whether `send` has returned when it claims; an early one asks here. `handle`: the one
    /// the engine kept alive, handed over by an early end.
    func hand(
        _ result: Result<Response<Value>, TernError>, claim: Claim, handle: RequestHandle? = nil, later: Bool = false
    ) {
        progress?.flush()  // the last counts first, then the completion
        if case .claimed = claim { reportFinished(result) }
        let later = later || (claim == .claimed && isInsideSend)
        if case .immediate = queue, !later {
            return complete(result, claim: claim, handle: handle)  // here and now: no closure to make
        }
        let work: @Sendable () -> Void = { [self] in complete(result, claim: claim, handle: handle, deferred: later) }
        if later { queue.performLater(work) } else { queue.perform(work) }
    }

    /// Calls the completion, on the callback queue: at once for a result already claimed, else
    /// once the claim succeeds here (a cancel or the owner's release may have come first);
    /// `deferred`: this already runs after `send` returned.
    private func complete(
        _ result: Result<Response<Value>, TernError>, claim: Claim, handle: RequestHandle?, deferred: Bool = false
    ) {
        switch claim {
        case .claimed:
            if isListenedTo { completion(handle ?? self.handle, result) }
        case .onDelivery:
            if lifetime.ownerIsGone { return cancel(.ownerReleased) }
            let (delivery, kept) = self.claim(deferred: deferred)
            switch delivery {
            case .now:
                reportFinished(result)
                if isListenedTo { completion(kept ?? self.handle, result) }
            case .afterSend:
                queue.performLater { [self] in complete(result, claim: claim, handle: handle, deferred: true) }
            case .stale:
                break
            }
        }
    }

    /// A request that failed inside `send`: its callback runs after `send` returns.
    static func failedInsideSend(
        _ lifecycle: RequestLifecycle, _ error: TernError, queue: CallbackQueue,
        completion: @escaping Completion
    ) -> RequestHandle {
        let handle = lifecycle.makeHandle()
        lifecycle.fail(error)  // no call has begun: this only marks it finished; delivered below
        let retainedHandle = lifecycle.retainsHandle ? handle : nil
        queue.performLater { [weak handle] in
            let handle = retainedHandle ?? handle
            if lifecycle.lifetime.kind != .detached || handle != nil { completion(handle, .failure(error)) }
        }
        return handle
    }

    /// Delivers a cache-then-network hit, decoded with the request's serializer, on the callback
    /// queue: never inside `send`, never after the request finished or was cancelled; then runs
    /// `next` (at once when there is no hit to deliver).
    func deliverHit(_ raw: RawResponse, then next: @escaping @Sendable () -> Void) {
        guard let cacheHit, let value = try? processing.serializer.value(from: raw.data, head: raw.head, method: method)
        else { return next() }
        let response = processing.response(raw, value: value, route: nil)
        let run = isInsideSend ? queue.performLater : queue.perform
        run { [self] in
            if !hasEnded, isListenedTo { cacheHit(handle, response) }
            next()
        }
    }
}

extension Call {
    /// Tells the observers how the request ended.
    func reportFinished(_ result: Result<Response<Value>, TernError>) {
        // A cancel is told where it happens (`cancelled(_:)`), delivered or not.
        if result.failure?.isCancelled != true || read(\.cancellation) == nil {
            observers.requestEnded(result.failure, seconds: secondsSinceSend)
        }
        observers.record(.finished(outcome(of: result)))
    }

    /// How `result` ended the request, for monitors and spans.
    func outcome(of result: Result<Response<Value>, TernError>) -> RequestOutcome {
        let route = self.route
        let response = try? result.get()
        return RequestOutcome(
            statusCode: response?.statusCode, error: result.failure, source: response?.source, duration: secondsSinceSend,
            attempts: route.attempt, redirects: route.redirects.count, bytes: response?.data.count ?? 0, body: response?.data)
    }

    /// Seconds since the request was sent.
    var secondsSinceSend: TimeInterval { Double(DispatchTime.now().uptimeNanoseconds - started.uptime) / 1e9 }
}

extension RequestLifecycle {
    /// How a terminal result gets the right to be delivered.
    enum Claim {
        /// Already claimed (cancel, timeout, an error inside `send`); deliver on the callback queue.
        case claimed
        /// Claim when the callback runs; drop it if something else finished the request first.
        case onDelivery
    }
}
