import Foundation
import TernCache

/// How an outbox item is stored from a `Request` and sent again from what was stored.
enum OutboxRequest {
    /// A request as the outbox stores it: built once, with its parameter and URL hooks applied.
    struct Built {
        var url: URL
        var method: HTTPMethod
        /// The request's and its group's headers and the body's `Content-Type`; the client's
        /// headers and every header a hook or authentication adds are added at each send instead.
        var headers: [String: String]
        var body: Data?
        /// A body that was a file (or a large multipart form), copied into the store's tmp/ under this name.
        var temporaryFile: String?
        var bodySize: Int64
    }

    /// Builds `request` as `client` would send it, copying a body on disk into `temporaryPath`.
    static func build<Value>(_ request: Request<Value>, client: Client, temporaryPath: String) throws(TernError) -> Built {
        if let problem = client.configurationError { throw problem }
        let options = CallOptions(request, client: client)
        let hooks = HookChain(request: request, settings: options.settings, client: client)
        let parts = try RequestBuilder.parts(request, options: options, hooks: hooks)
        let own = Set(
            ((request.group?.snapshot.settings.headers ?? [:]).keys.map { $0.lowercased() }) + request.headers.keys.map { $0.lowercased() })
        var headers: [String: String] = [:]
        // Content-Encoding too: a body compressed at enqueue is sent compressed.
        for (name, value) in parts.headers
        where own.contains(name.lowercased()) || ResponseHead.sameName(name, "Content-Type")
            || ResponseHead.sameName(name, "Content-Encoding")
        {
            headers[name] = value
        }
        if let contentType = parts.contentType { headers["Content-Type"] = contentType }
        var built = Built(
            url: parts.url, method: request.method, headers: headers, body: parts.body, temporaryFile: nil,
            bodySize: Int64(parts.body?.count ?? 0))
        if let upload = parts.upload {
            let name = "body-\(UUID().uuidString)"
            let destination = URL(fileURLWithPath: temporaryPath).appendingPathComponent(name)
            switch upload.content {
            case .file(let source):
                do {
                    try FileManager.default.copyItem(at: source, to: destination)
                } catch {
                    throw .invalidRequest(.unreadableFile(source, reason: "cannot copy it into the outbox: \(error.localizedDescription)"))
                }
            case .multipart(let form):
                try MultipartEncoder.write(form, to: destination)
            case .produced:
                throw .invalidRequest(
                    .invalidValue(
                        name: "body",
                        reason: "a body produced while it is sent cannot be kept in the outbox: give its bytes, or a file"))
            }
            built.temporaryFile = name
            built.bodySize = upload.length ?? 0
        }
        return built
    }

    /// What a stored item's send needs from the run that enqueued it; after a restart, nothing.
    struct Original: Sendable {
        var group: APIGroup?
        var retryPolicy: RetryPolicy?
    }

    /// The request that sends `record` (its body from `body`, or its file in `bodiesPath`).
    static func make(
        _ record: OutboxStore.Record, body: Data?, bodiesPath: String, original: Original?,
        configuration: OutboxConfiguration, client: Client
    ) -> Request<Data> {
        var headers = record.headers
        let keyHeader = configuration.idempotencyKeyHeader
        if !keyHeader.isEmpty, headers.headerValue(named: keyHeader) == nil {
            headers[keyHeader] = "\"\(record.idempotencyKey)\""
        }
        let requestBody: RequestBody? =
            if let file = record.bodyFile {
                .file(URL(fileURLWithPath: bodiesPath).appendingPathComponent(file))
            } else {
                body.map { .data($0) }
            }
        var request = Request<Data>(record.url, method: HTTPMethod(rawValue: record.method), body: requestBody, headers: headers)
        request.group = original?.group ?? configuration.groups.first { $0.name == record.apiGroup }
        // The URL and body were built when the item was accepted: parameter and URL hooks ran then.
        request.isPrebuilt = true
        request.repeatStrategy = .allow
        request.reportsCancellation = true
        // Delivered is decided by the status alone: an answer the app would not decode still arrived.
        request.validation = ResponseValidation(acceptableStatusCodes: 200..<300)
        let policy = original?.retryPolicy ?? RequestSettings(client, group: request.group?.snapshot).retryPolicy
        // The idempotency key makes every method safe to repeat.
        request.retryPolicy = policy.retryingAllMethods()
        return request
    }

    /// What one send's result means for its item.
    enum Outcome: Sendable {
        case delivered(statusCode: Int, body: Data)
        /// A failure that may pass: send again after `retryAfter` (the server's) or a backoff;
        /// `connectionFailed`: no connection, or it broke before an answer (refused, reset, lost).
        case retry(retryAfter: TimeInterval?, reason: String, connectionFailed: Bool = false)
        case failed(OutboxFailure)
        /// Cancelled or the client invalidated: the item stays as it was, no attempt counted.
        case interrupted
    }

    /// Transport failures of the connection itself, which a moment may cure: the server refused it
    /// (restarting), or it broke before the answer.
    private static let connectionFailures: Set<URLError.Code> = [.cannotConnectToHost, .networkConnectionLost]

    /// The outcome of a send's result.
    static func outcome(of result: Result<Response<Data>, TernError>) -> Outcome {
        let error: TernError
        switch result {
        case .success(let response): return .delivered(statusCode: response.statusCode, body: response.data)
        case .failure(.failedAfterRetries(_, let last)): error = last
        case .failure(let failure): error = failure
        }
        switch error {
        case .unacceptableStatus(let code, let body, _, _):
            if code == 408 || code == 409 || code == 425 || code == 429 || code >= 500 {
                return .retry(retryAfter: RetryPolicy.retryAfter(error), reason: error.description)
            }
            return .failed(.rejected(statusCode: code, body: body))
        case .cancelled, .clientInvalidated:
            return .interrupted
        case .transport(let failure) where connectionFailures.contains(failure.code):
            return .retry(retryAfter: nil, reason: error.description, connectionFailed: true)
        case .invalidRequest, .unsupportedConfiguration, .business:
            return .failed(.unsendable(error.description))
        default:
            return .retry(retryAfter: nil, reason: error.description)
        }
    }
}
