import Foundation

/// Where a call's response body goes, chosen once when the call is prepared: kept in memory (up
/// to the request's size limit), written to a download's file, or handed to a streaming reader
/// chunk by chunk. Every attempt of the call writes to it; only `Attempt` feeds it.
enum ResponseDestination: Sendable {
    /// Kept in memory, then validated and decoded.
    case memory
    /// Written to a download's partial file, moved into place once complete (`Request.download`).
    case file(DownloadSession)
    /// Handed to the request's reader as it arrives (`Request.onChunk`, `Client.stream`).
    case chunks(ChunkSink)

    /// Whether the body leaves memory: then the response is never cached, and its exchange never
    /// shared with identical requests.
    var leavesMemory: Bool {
        if case .memory = self { false } else { true }
    }

    /// Whether exchanges must hand over the body as it arrives.
    var streams: Bool {
        if case .chunks = self { true } else { false }
    }

    /// Whether a chunk already reached the reader: then the request is never retried.
    var hasDelivered: Bool {
        if case .chunks(let sink) = self { sink.hasDelivered } else { false }
    }

    /// What the transport writes an exchange of `request` to; a download resumes from what is on
    /// disk now (and `request` asks for the rest).
    func forExchange(of request: inout URLRequest, limit: Int?) -> TransportRequest.Destination {
        guard case .file(let download) = self else { return .memory(limit: limit) }
        return .file(download.partialURL, offset: download.prepare(&request))
    }

    /// A new response head: whether its body is kept in memory (a download's error body, a body
    /// the reader refused), and the offset a download resumed from.
    func responseStarted(_ response: ResponseHead) -> (keepsBody: Bool, resumedFrom: Int64) {
        switch self {
        case .memory: return (true, 0)
        case .file(let download):
            let (toFile, resumedFrom) = download.responseStarted(response.httpResponse)
            return (!toFile, resumedFrom)
        case .chunks(let sink): return (!sink.accepts(response.httpResponse), 0)
        }
    }

    /// A chunk of `request`'s body not kept in memory.
    func receive(_ chunk: Data, of request: RequestLifecycle) {
        switch self {
        case .memory: break
        case .file(let download): download.received(chunk)
        case .chunks(let sink): sink.receive(chunk, of: request)
        }
    }

    /// An exchange's last event: after it nothing writes a download's file, so an exchange that
    /// outlived its request cleans up here.
    func exchangeEnded() {
        if case .file(let download) = self, download.hasEnded { download.ended() }
    }

    /// The request ended: a download that did not succeed leaves no file (unless resumable).
    func requestEnded() {
        if case .file(let download) = self { download.ended() }
    }

    /// Whether a response of `statusCode` shows that a download's partial file cannot be continued: the next
    /// attempt starts from byte 0.
    func startsOver(afterStatus statusCode: Int) -> Bool {
        if case .file(let download) = self { download.startsOver(afterStatus: statusCode) } else { false }
    }

    /// The file a download's complete network response was moved to; nil for other destinations.
    func completedFile(_ raw: RawResponse) throws(TernError) -> DownloadedFile? {
        guard case .file(let download) = self, raw.source == .network else { return nil }
        return try download.complete(raw.response)
    }
}
