import Foundation

/// Every way a Tern request can fail, one case per failure; where one failure has several reasons,
/// they are a nested enum (`InvalidRequestReason`, `RedirectFailure`, `CancellationReason`).
///
/// By the phase of the request's life they belong to:
/// - **before anything is sent**: `invalidRequest`, `unsupportedConfiguration`,
///   `clientInvalidated`, `cacheMiss`;
/// - **on the way**: `transport`, `pinningFailed`, `timedOut`, `deadlineExceeded`,
///   `redirectFailed`, `responseTooLarge`, `requestBodyFailed` (a body produced while it is sent);
/// - **the answer**: `unacceptableStatus`, `unacceptableContentType`, `decoding`, `business`,
///   `rejected` (a hook's own error);
/// - **the request as a whole**: `cancelled`, `failedAfterRetries` (which wraps the last
///   attempt's failure; the accessors look through it);
/// - **a WebSocket**: `webSocketHandshakeFailed` (a 101 that breaks the rules), `webSocketFailed`
///   (the protocol broken, or the connection lost, once open).
///
/// The same failure gives the same case on every callback style and platform: a stalled server
/// is `.timedOut` whether URLSession's idle timer or Tern's own fired first, a 404 is
/// `.unacceptableStatus` whether you used a closure, a delegate or `await`.
/// Thread safety: a value type, safe to share.
public enum TernError: Error, Sendable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The request could not be built; nothing was sent.
    case invalidRequest(InvalidRequestReason)
    /// The transport failed (connection refused, reset, DNS, TLS, …); carries Foundation's error.
    case transport(URLError)
    /// An attempt had no sign of life from the server for `after` seconds (the idle `timeout`),
    /// or outlived its own limit (`RetryPolicy.attemptTimeout`). The retry policy may try again.
    case timedOut(after: TimeInterval)
    /// The whole request — its attempts, redirects, retries and the waits between them —
    /// outlasted its `deadline` (seconds). Never retried.
    case deadlineExceeded(after: TimeInterval)
    /// The server answered with a status code outside the accepted set; carries the body, the
    /// response headers (`Retry-After`, `WWW-Authenticate`, …) and the request that got it (its
    /// method and the URL that answered, which the description names, redacted).
    case unacceptableStatus(code: Int, body: Data, headers: [String: String], request: RequestLine = .unknown)
    /// The response's `Content-Type` is not one the request accepts; carries the body.
    case unacceptableContentType(String?, body: Data)
    /// The body could not be turned into the requested value; carries the body and the reason.
    case decoding(description: String, body: Data)
    /// The request was cancelled before it delivered a result.
    case cancelled(CancellationReason)
    /// The client was invalidated before this request was sent.
    case clientInvalidated
    /// A `.cacheOnly` request found no fresh cache entry; nothing was sent.
    case cacheMiss(url: URL?)
    /// A redirect could not be followed: too many, an https → http downgrade, a bad `Location`.
    case redirectFailed(RedirectFailure)
    /// A hook (`name`) rejected the request or its response with its own `error`.
    case rejected(by: String, error: any Error)
    /// The response body is larger than the request's limit in bytes (`maximumResponseSize`):
    /// refused on its announced `Content-Length`, or stopped as it crossed the limit.
    case responseTooLarge(limit: Int)
    /// The server answered, but its body says the call failed: a `ResponseRule` (such as
    /// `BusinessRule`) read this code and message from it; carries the body.
    case business(code: Int, message: String, body: Data)
    /// The request was tried `attempts` times (the retry policy's retries, restarts and credential
    /// refreshes included) and the last attempt failed with `last`. The accessors (`statusCode`,
    /// `responseBody`, `underlyingError`, …) look through to `last`.
    indirect case failedAfterRetries(attempts: Int, last: TernError)
    /// The server's certificate for `host` matched none of the pins configured for it
    /// (`TLSConfiguration.pinning`); nothing was sent, and it is never retried.
    case pinningFailed(host: String)
    /// The client's configuration is invalid (a timeout that is not more than 0, a negative size
    /// limit) or asks for something its transport cannot do (pinning with URLSession on Linux,
    /// say); every request of that client fails with it, nothing is sent.
    /// `Client.configurationError` has it from the client's creation on.
    case unsupportedConfiguration(String)
    /// A WebSocket failed with close code `code` and `reason`: the server broke the protocol
    /// (`.protocolError`), sent text that is not UTF-8 (`.invalidFramePayloadData`) or a message
    /// over the limit (`.messageTooBig`) — Tern closed it with that code — or the connection ended
    /// without a close frame (`.abnormalClosure`).
    case webSocketFailed(code: WebSocketCloseCode, reason: String)
    /// A WebSocket's opening handshake got a `101` that breaks its rules (a wrong accept key, an
    /// extension or subprotocol not offered): the socket never opened, and no close frame was sent.
    case webSocketHandshakeFailed(WebSocketHandshakeFailure)
    /// A body produced while it is sent (`RequestBody.stream`) could not be sent whole: its
    /// producer failed, it made more or fewer bytes than it announced, or a redirect or restart
    /// needed it again and it can be produced only once. Never retried.
    case requestBodyFailed(RequestBodyFailure)

    /// Why a redirect was not followed.
    public enum RedirectFailure: Sendable, Equatable, CustomStringConvertible {
        /// The request had already followed `limit` redirects when `url` redirected again.
        case tooMany(limit: Int, url: URL)
        /// An https URL redirected to an http one, and the policy does not allow downgrades.
        case insecureDowngrade(from: URL, to: URL)
        /// The `Location` header is not an http or https URL.
        case invalidLocation(String, from: URL)

        /// A one-line explanation.
        public var description: String {
            switch self {
            case .tooMany(let limit, let url): "more than \(limit) redirects (the last from \(url.absoluteString))"
            case .insecureDowngrade(let from, let to): "refused https → http redirect from \(from.absoluteString) to \(to.absoluteString)"
            case .invalidLocation(let location, let from): "redirect from \(from.absoluteString) to unusable location \"\(location)\""
            }
        }
    }

    /// Why a request could not be built.
    public enum InvalidRequestReason: Sendable, Equatable, CustomStringConvertible {
        /// The URL string was empty and the client has no base URL.
        case emptyURL
        /// The URL (or base URL joined with the path) is not a valid URL.
        case malformedURL(String)
        /// The URL's scheme is not `http` or `https`.
        case unsupportedScheme(String)
        /// A relative path was given to a client without a base URL.
        case missingBaseURL(path: String)
        /// A header name or value contains CR, LF or another forbidden character.
        case invalidHeader(name: String)
        /// A parameter or body value cannot be encoded; names the key path and the reason.
        case unencodableValue(key: String, reason: String)
        /// The method does not allow a body (Tern refuses a body on GET and HEAD).
        case bodyNotAllowed(method: String)
        /// A download's destination already holds a file and `replacesExistingFile` is off.
        case destinationExists(URL)
        /// A download cannot be written there: not a file URL, a folder in the way, a missing
        /// folder not to be created, or one that cannot be created.
        case unusableDestination(URL, reason: String)
        /// A file to upload (a body or a multipart part) cannot be read.
        case unreadableFile(URL, reason: String)
        /// A multipart part cannot be sent as given: its MIME type holds CR, LF or NUL, which
        /// would end its header line early (header injection). `name` is the part's field name.
        case invalidPart(name: String, reason: String)
        /// A setting of the request has a value it cannot have: a timeout that is not more than
        /// 0 (nor `.infinity`), a negative size limit, a port outside 1–65535. `name` says which.
        case invalidValue(name: String, reason: String)

        /// A one-line explanation.
        public var description: String {
            switch self {
            case .emptyURL: "the URL is empty"
            case .malformedURL(let url): "malformed URL \"\(url)\""
            case .unsupportedScheme(let scheme): "unsupported URL scheme \"\(scheme)\" (only http and https)"
            case .missingBaseURL(let path): "relative path \"\(path)\" but the client has no base URL"
            case .invalidHeader(let name):
                "invalid header \"\(name.debugDescription.dropFirst().dropLast())\" (CR, LF or a forbidden character)"
            case .unencodableValue(let key, let reason): "cannot encode value for \"\(key)\": \(reason)"
            case .bodyNotAllowed(let method): "\(method) requests cannot carry a body"
            case .destinationExists(let url): "a file already exists at \(url.path) (set replacesExistingFile to replace it)"
            case .unusableDestination(let url, let reason): "cannot download to \(url.path): \(reason)"
            case .unreadableFile(let url, let reason): "cannot read \(url.path) to upload it: \(reason)"
            case .invalidValue(let name, let reason): "invalid \(name): \(reason)"
            case .invalidPart(let name, let reason): "multipart part \"\(name.debugDescription.dropFirst().dropLast())\": \(reason)"
            }
        }
    }

    /// Why a request was cancelled.
    public enum CancellationReason: Sendable, Equatable, CustomStringConvertible {
        /// Cancelled through its handle, its Swift `Task`, or the client's `cancel(url:)`,
        /// `cancel(tag:)` or `cancelAll()`.
        case explicit
        /// The client was invalidated while the request was in flight.
        case clientInvalidated
        /// A newer identical request replaced it (`RepeatStrategy.cancelOlder`).
        case superseded
        /// An identical request was already in flight (`RepeatStrategy.ignoreNewer`).
        case duplicate
        /// Its owner was deallocated (`Lifetime.owner`).
        case ownerReleased
        /// Its handle was released (`Lifetime.handleReleased`); never delivered.
        case handleReleased

        /// A short explanation.
        public var description: String {
            switch self {
            case .explicit: "cancelled by the app (cancel(), cancel(url:), cancel(tag:), cancelAll() or its Task)"
            case .clientInvalidated: "cancelled because the client was invalidated"
            case .superseded: "cancelled: a newer identical request replaced it"
            case .duplicate: "not sent: an identical request is already in flight"
            case .ownerReleased: "cancelled because its owner was deallocated"
            case .handleReleased: "cancelled because its handle was released"
            }
        }
    }

    /// `true` for `.cancelled`, whatever the reason: the usual "ignore this" check in UI code.
    public var isCancelled: Bool {
        if case .cancelled = lastFailure { return true }
        return false
    }

    /// `true` for `.timedOut` (an idle or over-long attempt) and `.deadlineExceeded` (the whole
    /// request), after retries too.
    public var isTimeout: Bool {
        switch lastFailure {
        case .timedOut, .deadlineExceeded: true
        default: false
        }
    }

    /// The failure itself: `last` for `.failedAfterRetries`, else this error.
    public var lastFailure: TernError {
        if case .failedAfterRetries(_, let last) = self { return last }
        return self
    }

    /// How many attempts were made, for `.failedAfterRetries`; nil otherwise (one attempt, or
    /// none). `RequestHandle.attempt` has the count for every request.
    public var attempts: Int? {
        if case .failedAfterRetries(let attempts, _) = self { return attempts }
        return nil
    }

    /// The HTTP status code, for `.unacceptableStatus`.
    public var statusCode: Int? {
        if case .unacceptableStatus(let code, _, _, _) = lastFailure { return code }
        return nil
    }

    /// The business code and message, for `.business`.
    public var businessError: (code: Int, message: String)? {
        if case .business(let code, let message, _) = lastFailure { return (code, message) }
        return nil
    }

    /// The response headers, for `.unacceptableStatus`.
    public var responseHeaders: [String: String]? {
        if case .unacceptableStatus(_, _, let headers, _) = lastFailure { return headers }
        return nil
    }

    /// A response header looked up case-insensitively, for `.unacceptableStatus` (e.g. `Retry-After`).
    public func responseHeader(_ name: String) -> String? {
        responseHeaders?.headerValue(named: name)
    }

    /// The response body the failure carries, if any (status, content-type and decoding errors).
    public var responseBody: Data? {
        switch lastFailure {
        case .unacceptableStatus(_, let body, _, _), .unacceptableContentType(_, let body), .decoding(_, let body),
            .business(_, _, let body):
            return body
        default:
            return nil
        }
    }

    /// Foundation's error, for `.transport`.
    public var underlyingError: URLError? {
        if case .transport(let error) = lastFailure { return error }
        return nil
    }

    /// A one-line explanation, with the first bytes of the body where there is one; secrets in
    /// URLs and bodies are redacted (`Redaction.shared`).
    public var description: String {
        Redaction.shared.text(explanation)
    }

    /// The same as `description`: redacted, so `String(reflecting:)` and `dump` leak nothing either.
    public var debugDescription: String { description }

    private var explanation: String {
        switch self {
        case .invalidRequest(let reason):
            return "Invalid request: \(reason)"
        case .transport(let error):
            return "Transport error \(error.code.rawValue) (\(Self.name(of: error.code))): \(error.localizedDescription)"
        case .timedOut(let seconds):
            return "Timed out: no answer for \(seconds) s"
        case .deadlineExceeded(let seconds):
            return "Deadline of \(seconds) s exceeded"
        case .unacceptableStatus(let code, let body, _, let request):
            let line = request == .unknown ? "" : " from \(request)"
            return "HTTP status \(code)\(Self.reasonPhrase(code).map { " \($0)" } ?? "")\(line)\(Self.preview(body))"
        case .unacceptableContentType(let type, let body):
            return "Unacceptable content type \(type ?? "(none)")\(Self.preview(body))"
        case .decoding(let description, let body):
            return "Decoding failed: \(description)\(Self.preview(body))"
        case .cancelled(let reason):
            return "Request \(reason)"
        case .clientInvalidated:
            return "The client was invalidated; create a new client"
        case .cacheMiss(let url):
            return "No fresh cached response for \(url?.absoluteString ?? "the request") (cache only)"
        case .redirectFailed(let failure):
            return "Redirect failed: \(failure)"
        case .rejected(let hook, let error):
            return "Rejected by \(hook): \(error)"
        case .responseTooLarge(let limit):
            return "The response is larger than the limit of \(limit) bytes"
        case .business(let code, let message, _):
            return "Business error \(code)\(message.isEmpty ? "" : ": \(message)")"
        case .failedAfterRetries(let attempts, let last):
            return "\(last) (after \(attempts) attempts)"
        case .pinningFailed(let host):
            return "The certificate of \(host) matches none of the pins configured for it"
        case .unsupportedConfiguration(let reason):
            return "Unsupported configuration: \(reason)"
        case .webSocketFailed(let code, let reason):
            return "WebSocket failed: \(code)\(reason.isEmpty ? "" : ", \(reason)")"
        case .requestBodyFailed(let failure):
            return "The request body could not be sent: \(failure)"
        case .webSocketHandshakeFailed(let failure):
            return "WebSocket handshake failed: \(failure)"
        }
    }

    private static func preview(_ body: Data) -> String {
        guard !body.isEmpty else { return "" }
        let text = Redaction.shared.body(String(decoding: body.prefix(120), as: UTF8.self))
        return " — body (\(body.count) bytes): \(text)\(body.count > 120 ? "…" : "")"
    }
}
