import Foundation

/// One exchange with the transport for a `Call`: the first request, a followed redirect, a retry.
///
/// It collects what its exchange reports — the response head, the body, progress, timing marks —
/// and hands one outcome to its call when the exchange completes. An attempt runs either alone on
/// the transport or as a member of a `SharedExchange` (`RepeatStrategy.share`), which feeds it
/// the same events. A new response head restarts the body and the download progress.
/// Thread safety: events arrive from its exchange one at a time (the transport's contract), and
/// everything else is set before the exchange starts.
// Sendable: `head`, `body` and `marks` are touched only by the exchange's serial event stream.
final class Attempt: @unchecked Sendable {
    /// 1 for the first exchange of a request, 2 for the next, and so on.
    let number: Int
    /// The call it belongs to.
    let call: any AttemptOwner
    private var head: HTTPURLResponse?
    private var body = Data()
    /// False while a download's body goes to its file or a streamed body to its reader: chunks
    /// are counted, not kept.
    private var keepsBody = true
    private(set) var marks = AttemptMarks()

    /// Creates attempt `number` of `call`, which sends `request`.
    init(number: Int, sending request: TransportRequest, call: any AttemptOwner) {
        self.number = number
        self.call = call
    }

    /// Bytes of this attempt's response body so far, for monitors.
    private var received: Int64 = 0

    /// The progress reporter of the request, if it has one.
    var progress: ProgressReporter? { call.core.progress }

    /// Feeds one event of this attempt's exchange.
    func receive(_ event: TransportEvent) {
        switch event {
        case .response(let response):
            head = response
            body = Data()
            received = 0
            var resumedFrom: Int64 = 0
            if let download = call.download {
                let toFile: Bool
                (toFile, resumedFrom) = download.responseStarted(response)
                keepsBody = !toFile
            } else if let sink = call.chunkSink {
                keepsBody = !sink.accepts(response)
            }
            progress?.responseStarted(response, resumedFrom: resumedFrom)
        case .data(let chunk):
            // A buffered transport hands over the whole body at once: keep it, do not copy it.
            if keepsBody {
                if body.isEmpty { body = chunk } else { body.append(chunk) }
            } else if let download = call.download {
                download.received(chunk)
            } else {
                call.chunkSink?.receive(chunk)
            }
            progress?.received(chunk.count)
            if let monitor = call.monitor {
                received += Int64(chunk.count)
                let expected = head.map(\.expectedContentLength).flatMap { $0 > 0 ? $0 : nil }
                monitor.send(.progress(TransferProgress(direction: .download, completedBytes: received, expectedBytes: expected)))
            }
        case .sentBytes(let total, let expected):
            progress?.sent(total, expected: expected)
            call.monitor?.send(.progress(TransferProgress(direction: .upload, completedBytes: total, expectedBytes: expected)))
        case .mark(let mark):
            marks.record(mark)
        case .completed(let error):
            let outcome: Result<RawResponse, URLError>
            if let error {
                outcome = .failure(error)
            } else if let head {
                outcome = .success(RawResponse(response: head, data: body))
            } else {
                outcome = .failure(URLError(.badServerResponse))
            }
            head = nil
            body = Data()
            // The last event of an exchange: after it nothing writes a download's file, so an
            // exchange that outlived its request cleans up here.
            if let download = call.download, download.hasEnded { download.ended() }
            call.attemptFinished(self, outcome)
        }
    }
}

/// The moments of one attempt on the monotonic clock (uptime nanoseconds), from the transport's
/// marks; 0 for a moment not reported. Kept for the metrics to come: nothing reads them yet, so
/// nothing is stamped on the request path for them either.
/// Thread safety: a value type, safe to share.
struct AttemptMarks: Sendable, Equatable {
    var start: UInt64 = 0
    var head: UInt64 = 0
    var end: UInt64 = 0

    mutating func record(_ mark: TransportMark) {
        switch mark.kind {
        case .requestStart: start = mark.uptimeNanoseconds
        case .responseHead: head = mark.uptimeNanoseconds
        case .end: end = mark.uptimeNanoseconds
        }
    }
}

/// What an attempt reports to: its `Call`.
protocol AttemptOwner: AnyObject, Sendable {
    /// The request's lifecycle.
    var core: RequestCore { get }
    /// Where the request's events go, when its client has monitors.
    var monitor: MonitorChannel? { get }
    /// The files of a download request; nil for other requests.
    var download: DownloadSession? { get }
    /// Where a streamed response's chunks go; nil when the body is kept.
    var chunkSink: ChunkSink? { get }
    /// The attempt's exchange completed with a response and its body, or failed.
    func attemptFinished(_ attempt: Attempt, _ outcome: Result<RawResponse, URLError>)
}
