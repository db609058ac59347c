import Foundation

/// The events from outside the call that can end a request early — a cancel, a failure, the
/// armed time — and the end itself: what it hands over, and who is told, outside the lock.
extension RequestLifecycle {
    /// A terminal action takes the kept handle and the end observer out of the guarded state.
    static func takeEnding(_ guarded: inout Guarded) -> Ending {
        defer { guarded.retainedHandle = nil; guarded.onFinished = nil }
        return (guarded.begun, guarded.retainedHandle, guarded.onFinished)
    }

    /// Cancels the request for `reason`: it ends with `TernError.cancelled(reason)`, delivered
    /// unless cancellation is silent for it (or `silently` is set). Idempotent, from any phase.
    func cancel(_ reason: TernError.CancellationReason, silently: Bool = false) {
        guard let ending = finishEarly({ $0.cancel(reason) }), ending.begun else { return }
        cancelled(reason)
        if reportsCancellation && !silently { deliverEarly(.cancelled(reason), handle: ending.handle) }
    }

    /// Ends the request at once with `error`, delivered if a call has begun;
    /// with `attempt`, only while that attempt is the current one and running (its adapter or
    /// its body on disk failed).
    func fail(_ error: TernError, attempt number: Int? = nil) {
        guard let ending = finishEarly({ $0.fail(attempt: number) }), ending.begun else { return }
        deliverEarly(error, handle: ending.handle)
    }

    /// Called by the scheduler when the armed time has come. An idle attempt fails only after its
    /// exchange has delivered what it already received (`heardOut`): a transport whose events
    /// wait for a queue that a busy process holds up is not a silent server.
    func deadlinePassed(heardOut: Bool = false) {
        let now = DispatchTime.now()
        let lastSignOfLife = signsOfLife.latest(now: now)
        let (expiry, total, ending) = locked { guarded -> (CallStateMachine.Expiry, TimeInterval, Ending?) in
            let expiry = guarded.machine.deadlinePassed(now: now, lastActivity: lastSignOfLife, asksToHearOut: !heardOut)
            switch expiry {
            case .finishEarly: return (expiry, guarded.machine.timers.total ?? 0, Self.takeEnding(&guarded))
            case .timeOutAttempt, .rearm, .hearOut, .stale: return (expiry, 0, nil)
            }
        }
        switch expiry {
        case .hearOut(let exchange):
            exchange.afterPendingEvents { [self] in deadlinePassed(heardOut: true) }
        case .timeOutAttempt(let attempt, let seconds, let exchange):
            // Timeout first: libcurl's instant cancel would otherwise be reported first, as a cancel.
            attemptTimedOut(attempt, after: seconds)
            exchange?.cancel()
        case .finishEarly(let exchange, let change):
            guard let ending = finishedEarly(exchange: exchange, change, ending), ending.begun else { return }
            deliverEarly(.deadlineExceeded(after: total), handle: ending.handle)
        case .rearm(let change):
            apply(change)
        case .stale:
            break
        }
    }

    /// Pauses (or resumes) reading the running exchange's response: a streamed body's reader
    /// has fallen behind (or caught up).
    func setExchangePaused(_ paused: Bool) {
        guard let exchange = read(\.exchange) else { return }
        signsOfLife.setHeldByReader(paused)
        if paused { exchange.suspend() } else { exchange.resume() }
    }

    /// Runs an event that may finish the request early; when it does, cancels its exchange and
    /// deadline and returns what the end hands over (nil when it did not end it).
    private func finishEarly(_ event: (inout CallStateMachine) -> CallStateMachine.Ending) -> Ending? {
        let (ending, taken) = locked { guarded -> (CallStateMachine.Ending, Ending?) in
            let ending = event(&guarded.machine)
            guard case .finishEarly = ending else { return (ending, nil) }
            return (ending, Self.takeEnding(&guarded))
        }
        guard case .finishEarly(let exchange, let change) = ending else { return nil }
        return finishedEarly(exchange: exchange, change, taken)
    }

    /// Carries out an early finish: progress, timer and exchange stop, the end is announced.
    private func finishedEarly(
        exchange: (any TransportTask)?, _ change: CallStateMachine.TimerChange, _ ending: Ending?
    ) -> Ending? {
        guard let ending else { return nil }
        progress?.stop()
        apply(change)
        exchange?.cancel()
        announce(ending)
        return ending
    }

    /// Tells the end observer that the request reached `.finished`, and cleans up, outside the lock.
    func announce(_ ending: Ending) {
        ending.onFinished?(self)
        if ending.begun { ended() }
    }
}
