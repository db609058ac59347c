import Foundation

/// Where a request's body comes from when it is not bytes in the request itself: a file as it
/// is, a multipart form too large for memory, or bytes produced while they are sent. Chosen when
/// the request is prepared; the transfer stage asks it for each attempt's body, as it asks the
/// `ResponseDestination` where the response goes.
///
/// A multipart form is written to a temporary file before the first attempt (off the caller's
/// thread) and streamed from there by every attempt — retries and 307/308 redirects replay it;
/// the temporary file is removed when the request ends, however it ends. A produced body gets a
/// new `RequestBodyStream` per attempt, when its producer can run again.
/// Thread safety: safe to use from any thread.
final class RequestBodySource: Sendable {
    enum Content: Sendable {
        case file(URL)
        case multipart(MultipartFormData)
        case produced(StreamedBody)
    }

    /// What an attempt sends, or why it cannot yet.
    enum AttemptBody {
        /// This body.
        case ready(TransportRequest.Body)
        /// A multipart form still to be written to its file (`prepare()`, off the caller's thread).
        case mustPrepare
        /// A body produced once, which an attempt already sent.
        case failed(RequestBodyFailure)
    }

    let content: Content
    /// The body's length in bytes, sent as `Content-Length`; nil when unknown (sent chunked).
    let length: Int64?
    private struct State {
        var file: URL?
        var ended = false
        /// The stream of the latest attempt, and how many were made.
        var stream: RequestBodyStream?
        var streamsMade = 0
        /// The redirects the attempt of `stream` had followed.
        var redirectsBefore = 0
    }
    private let state: Locked<State>

    init(_ content: Content, length: Int64?) {
        self.content = content
        self.length = length
        if case .file(let url) = content { state = Locked(State(file: url)) } else { state = Locked(State()) }
    }

    /// The file every attempt streams; nil until `prepare()` wrote a multipart form's.
    private var file: URL? { state.withLock { $0.file } }

    /// Whether every attempt can send the body (false for a body produced only once).
    var isReplayable: Bool {
        guard case .produced(let body) = content else { return true }
        return body.isReplayable
    }

    /// The body of the next attempt, which followed `redirects`.
    func body(forAttemptAfter redirects: [Redirect]) -> AttemptBody {
        if case .produced(let body) = content {
            switch nextStream(of: body, after: redirects) {
            case .success(let stream): return .ready(.stream(stream))
            case .failure(let failure): return .failed(failure)
            }
        }
        return file.map { .ready(.file($0)) } ?? .mustPrepare
    }

    /// A new stream of `body` for the next attempt, which followed `redirects`: its producer
    /// started, the previous one closed; why not when the body can be produced only once and
    /// already was.
    private func nextStream(of body: StreamedBody, after redirects: [Redirect]) -> Result<RequestBodyStream, RequestBodyFailure> {
        let stream = RequestBodyStream(length: body.length)
        let outcome = state.withLock { state -> Result<RequestBodyStream?, RequestBodyFailure> in
            guard !state.ended, body.isReplayable || state.streamsMade == 0 else {
                // A redirect since the stream before is what asks for the body again.
                let redirect = redirects.count > state.redirectsBefore ? redirects.last : nil
                return .failure(.notReplayable(redirect: redirect))
            }
            defer { (state.stream, state.streamsMade, state.redirectsBefore) = (stream, state.streamsMade + 1, redirects.count) }
            return .success(state.stream)
        }
        switch outcome {
        case .failure(let failure): return .failure(failure)
        case .success(let previous):
            previous?.close()
            stream.start(body.produce)
            return .success(stream)
        }
    }

    /// Writes a multipart form to its temporary file (once). Slow for large forms: call it off
    /// the caller's thread.
    func prepare() throws(TernError) {
        guard case .multipart(let form) = content, file == nil else { return }
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("tern-multipart-\(UUID().uuidString)")
        do {
            try MultipartEncoder.write(form, to: url)
        } catch {
            try? FileManager.default.removeItem(at: url)
            throw error
        }
        let endedMeanwhile = state.withLock { state -> Bool in
            if !state.ended { state.file = url }
            return state.ended
        }
        if endedMeanwhile { try? FileManager.default.removeItem(at: url) }
    }

    /// The request ended: a temporary file goes (a caller's file stays), a producer stops.
    func ended() {
        let (temporary, stream) = state.withLock { state -> (URL?, RequestBodyStream?) in
            state.ended = true
            defer { state.stream = nil }
            guard case .multipart = content else { return (nil, state.stream) }
            defer { state.file = nil }
            return (state.file, nil)
        }
        if let temporary { try? FileManager.default.removeItem(at: temporary) }
        stream?.close()
    }
}

/// Lays out a `MultipartFormData`: each part's head, its content and a CRLF, then the closing
/// boundary. The same bytes in memory or in a file.
enum MultipartEncoder {
    /// The body's exact length; fails for a file part that cannot be read.
    static func length(of form: MultipartFormData) throws(TernError) -> Int64 {
        var total = Int64(closing(form).count)
        for part in form.parts {
            try part.validate()
            total += Int64(part.head(boundary: form.boundary).count) + 2
            switch part {
            case .data(let data, _, _, _): total += Int64(data.count)
            case .file(let url, _, _, _): total += try FileBody.size(of: url)
            }
        }
        return total
    }

    /// The body in memory (for forms under the memory threshold).
    static func data(of form: MultipartFormData) throws(TernError) -> Data {
        var body = Data()
        for part in form.parts {
            body.append(part.head(boundary: form.boundary))
            switch part {
            case .data(let data, _, _, _): body.append(data)
            case .file(let url, _, _, _):
                do { body.append(try Data(contentsOf: url)) } catch {
                    throw .invalidRequest(.unreadableFile(url, reason: error.localizedDescription))
                }
            }
            body.append(crlf)
        }
        body.append(closing(form))
        return body
    }

    /// Writes the body to `url`, a file part at a time in 1 MB pieces.
    static func write(_ form: MultipartFormData, to url: URL) throws(TernError) {
        guard FileManager.default.createFile(atPath: url.path, contents: nil), let output = try? FileHandle(forWritingTo: url) else {
            throw .invalidRequest(.unreadableFile(url, reason: "cannot create a temporary file for the multipart body"))
        }
        defer { try? output.close() }
        func put(_ data: Data) throws(TernError) {
            do { try output.writeAll(data) } catch {
                throw .invalidRequest(.unreadableFile(url, reason: "cannot write the multipart body: \(error.localizedDescription)"))
            }
        }
        for part in form.parts {
            try put(part.head(boundary: form.boundary))
            switch part {
            case .data(let data, _, _, _): try put(data)
            case .file(let file, _, _, _):
                guard let input = try? FileHandle(forReadingFrom: file) else {
                    throw .invalidRequest(.unreadableFile(file, reason: "cannot open it"))
                }
                defer { try? input.close() }
                while true {
                    let piece = input.readData(ofLength: 1 << 20)
                    if piece.isEmpty { break }
                    try put(piece)
                }
            }
            try put(crlf)
        }
        try put(closing(form))
    }

    private static let crlf = Data("\r\n".utf8)

    private static func closing(_ form: MultipartFormData) -> Data { Data("--\(form.boundary)--\r\n".utf8) }
}

/// Facts about a file to upload.
enum FileBody {
    /// The size of the regular file at `url`, or why it cannot be uploaded.
    static func size(of url: URL) throws(TernError) -> Int64 {
        guard url.isFileURL else { throw .invalidRequest(.unreadableFile(url, reason: "not a file URL")) }
        let attributes: [FileAttributeKey: Any]
        do { attributes = try FileManager.default.attributesOfItem(atPath: url.path) } catch {
            throw .invalidRequest(.unreadableFile(url, reason: "no such file"))
        }
        guard attributes[.type] as? FileAttributeType == .typeRegular else {
            throw .invalidRequest(.unreadableFile(url, reason: "not a regular file"))
        }
        guard FileManager.default.isReadableFile(atPath: url.path) else {
            throw .invalidRequest(.unreadableFile(url, reason: "not readable"))
        }
        return (attributes[.size] as? NSNumber)?.int64Value ?? 0
    }
}
