import Foundation

/// One exchange with the transport for a `Call`: the first request, a followed redirect, a retry.
///
/// It collects what its exchange reports — the response head, the body, progress, metrics —
/// and hands one outcome to its call when the exchange completes. It is where a call's body is
/// collected, whether the attempt runs alone on the transport or as a member of a
/// `SharedExchange` (`RepeatStrategy.share`), which keeps the shared body once and hands it over
/// whole at the end, as a buffering transport does. A new response head restarts the body and
/// the download progress; the body of a redirect that will be followed is not counted as
/// progress, so the count a caller sees only grows up to the final response's.
/// Thread safety: events arrive from its exchange one at a time (the transport's contract), and
/// everything else is set before the exchange starts.
// Sendable: `head`, `body` and `clock` are touched only by the exchange's serial event stream.
final class Attempt<Value: Sendable>: @unchecked Sendable {
    /// 1 for the first exchange of a request, 2 for the next, and so on.
    let number: Int
    /// What it sends (after its adapters): where a redirect it receives leads from.
    let request: URLRequest
    /// The redirects followed to reach it.
    let redirectsFollowed: Int
    /// The call it belongs to.
    let call: Call<Value>
    private var head: ResponseHead?
    private var body = Data()
    /// False while a download's body goes to its file or a streamed body to its reader: chunks
    /// are counted, not kept.
    private var keepsBody = true
    /// When the exchange started and its head arrived, and its byte counts: the metrics.
    private var clock = ExchangeClock()
    /// Bytes of the request body sent (its size when in memory, else as reported).
    private var sent: Int64
    /// Bytes of the body a buffering transport said it has received (`.receiving`), ahead of the body.
    private var announced: Int64 = 0
    /// False for the body of a redirect the call follows: not the caller's download.
    private var countsDownload = true
    /// The body being produced while it is sent, if it is.
    private let bodyStream: RequestBodyStream?
    #if DEBUG
    /// The transport's contract, checked: one event at a time, nothing after `.completed`.
    private let contract = Locked((receiving: false, completed: false))
    #endif

    /// Creates the attempt of `route` for `call`, which sends `request` as `exchange`.
    init(_ route: CallStateMachine.Route, sending request: URLRequest, exchange: TransportRequest, call: Call<Value>) {
        number = route.attempt
        self.request = request
        redirectsFollowed = route.redirects.count
        self.call = call
        if case .data(let data) = exchange.body { sent = Int64(data.count) } else { sent = 0 }
        if case .stream(let stream) = exchange.body { bodyStream = stream } else { bodyStream = nil }
    }

    /// Why its produced body could not be sent whole, when that is why the exchange failed.
    var bodyFailure: RequestBodyFailure? { bodyStream?.failure }

    /// The progress reporter of the request, if it has one.
    var progress: ProgressReporter? { call.progress }

    /// A new response head: the body starts over.
    private func started(_ response: ResponseHead) {
        head = response
        body = Data()
        clock.received = 0
        announced = 0
        clock.head = DispatchTime.now().uptimeNanoseconds
        let (keepsBody, resumedFrom) = call.destination.responseStarted(response)
        self.keepsBody = keepsBody
        countsDownload = !Self.isFollowedRedirect(response, policy: call.options.redirectPolicy)
        if countsDownload { progress?.responseStarted(response, resumedFrom: resumedFrom) }
    }

    /// Whether `response` is a redirect `policy` follows (a 301, 302, 303, 307 or 308 that says where).
    private static func isFollowedRedirect(_ response: ResponseHead, policy: RedirectPolicy) -> Bool {
        guard RedirectStage.isRedirect(response.statusCode), policy.follows else { return false }
        return response.value(forHTTPHeaderField: "Location") != nil
    }

    /// Feeds one event of this attempt's exchange.
    func receive(_ event: TransportEvent) {
        #if DEBUG
        let broken = contract.withLock { contract -> String? in
            defer { contract.receiving = true }
            if contract.completed { return "an event after .completed" }
            return contract.receiving ? "two events at once" : nil
        }
        if let broken { preconditionFailure("the transport broke its contract: \(broken) (\(event))") }
        defer {
            contract.withLock { contract in
                contract.receiving = false
                if case .completed = event { contract.completed = true }
            }
        }
        #endif
        switch event {
        case .head, .data, .receiving, .sentBytes: call.signsOfLife.touch()  // the idle timeout counts from here
        case .metrics, .completed: break
        }
        switch event {
        case .head(let response):
            started(response)
        case .data(let chunk):
            // A buffered transport hands over the whole body at once: keep it, do not copy it.
            if keepsBody {
                if body.isEmpty { body = chunk } else { body.append(chunk) }
            } else {
                call.destination.receive(chunk, of: call)
            }
            let before = max(clock.received, announced)
            clock.received += Int64(chunk.count)
            reportDownload(from: before)
        case .sentBytes(let total, let expected):
            sent = max(sent, total)
            progress?.sent(total, expected: expected)
            call.observers.record(.progress(TransferProgress(direction: .upload, completedBytes: total, expectedBytes: expected)))
        case .receiving(let total):
            let before = max(clock.received, announced)
            announced = max(announced, total)
            reportDownload(from: before)
        case .metrics(let metrics):
            clock.reported = metrics
        case .completed(let error):
            let outcome: Result<RawResponse, URLError>
            if let error {
                outcome = .failure(error)
            } else if let head {
                outcome = .success(RawResponse(head: head, data: body, metrics: clock.metrics(bytesSent: sent)))
            } else {
                outcome = .failure(URLError(.badServerResponse))
            }
            call.observers.exchangeEnded(sent: sent, received: clock.received, reused: clock.reported?.reusedConnection)
            head = nil
            body = Data()
            bodyStream?.close()
            call.destination.exchangeEnded()
            call.attemptFinished(self, outcome)
        }
    }

    /// Reports the body's progress, which stood at `before` bytes: what arrived as `.data` or was
    /// announced by `.receiving`, whichever is more, so a buffered body handed over at the end
    /// after its announcements is not counted twice.
    private func reportDownload(from before: Int64) {
        let now = max(clock.received, announced)
        guard now > before else { return }
        if countsDownload { progress?.received(Int(now - before)) }
        call.observers.record(
            .progress(
                TransferProgress(
                    direction: .download, completedBytes: now,
                    expectedBytes: head.map(\.expectedContentLength).flatMap { $0 > 0 ? $0 : nil })))
    }
}
