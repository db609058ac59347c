import Foundation

/// What the core tells its call (`CallTerminal`): an early end, a cancel, an attempt that timed
/// out, the end of the request.
extension Call {
    /// The request was cancelled (reported or not).
    func cancelled(_ reason: TernError.CancellationReason) {
        monitor?.send(.cancelled(reason))
    }

    /// Attempt `number` ran out of its own deadline: its outcome is a timeout, decided like any.
    func attemptTimedOut(_ number: Int, after seconds: TimeInterval) {
        finish(.failure(.timedOut(after: seconds)), attempt: number)
    }

    /// The request ended: a download that did not succeed leaves no file (unless resumable), and
    /// a multipart form's temporary file goes.
    func ended() {
        destination.requestEnded()
        bodyOnDisk?.ended()
    }

    /// Where slow processing and retry delays run: never a transport's callback thread.
    static var processingQueue: DispatchQueue { DispatchQueue.global(qos: .userInitiated) }
}
