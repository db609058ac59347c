import Foundation

/// A request described as a value: where it goes, what it sends, and what it expects back.
///
/// `Value` is the type the response decodes to; the serializer says how. For `JSON`, `Data`,
/// `String` and any `Decodable` type the serializer has a default, so most requests are one line:
/// ```swift
/// let search = Request<[City]>("search", query: ["q": "bei"])
/// let login = Request<JSON>("login", method: .post, body: .json(["user": name]))
/// ```
/// Thread safety: a value type, safe to share.
public struct Request<Value: Sendable>: Sendable {
    /// An absolute `http(s)` URL, or a path relative to the client's base URL.
    public var url: String
    /// The HTTP method; `.get` by default.
    public var method: HTTPMethod
    /// Query parameters, merged with any query already in `url` (see `ParameterEncoding`).
    public var query: Parameters
    /// The body; Tern refuses one on GET and HEAD.
    public var body: RequestBody?
    /// Headers for this request; they override the client's headers of the same name.
    public var headers: [String: String]
    /// Idle timeout in seconds for this request: an attempt with no sign of life from the server
    /// for this long fails with `.timedOut`. Nil uses its group's or client's `timeout`;
    /// `.infinity` means none. 0, a negative value or NaN fails the request with
    /// `.invalidRequest(.invalidValue)`.
    public var timeout: TimeInterval? {
        get { extras?.values.timeout }
        set { editExtras { $0.timeout = newValue } }
    }
    /// Limit in seconds on the whole request — every attempt, redirect, retry and wait between
    /// them — after which it fails with `.deadlineExceeded`. Nil uses its group's or client's
    /// `deadline`; `.infinity` means none even when those set one. Checked like `timeout`.
    public var deadline: TimeInterval? {
        get { extras?.values.deadline }
        set { editExtras { $0.deadline = newValue } }
    }
    /// Validation for this request; nil uses the client's `validation`.
    public var validation: ResponseValidation? {
        get { extras?.values.validation }
        set { editExtras { $0.validation = newValue } }
    }
    /// Turns the body into `Value`.
    public var serializer: ResponseSerializer<Value>
    /// Where closure and delegate callbacks run; nil uses the client's `callbackQueue`.
    public var callbackQueue: CallbackQueue? {
        get { extras?.values.callbackQueue }
        set { editExtras { $0.callbackQueue = newValue } }
    }
    /// Labels for `Client.cancel(tag:)` and for inspection; a request may carry several.
    public var tags: Set<String> {
        get { extras?.values.tags ?? RequestExtras.defaults.tags }
        set { editExtras { $0.tags = newValue } }
    }
    /// What to do when an identical request is already in flight; nil uses the client's
    /// `repeatStrategy`.
    public var repeatStrategy: RepeatStrategy? {
        get { extras?.values.repeatStrategy }
        set { editExtras { $0.repeatStrategy = newValue } }
    }
    /// Makes requests with the same key count as identical for `.cancelOlder` and `.ignoreNewer`
    /// whatever their URL: `"search"` for search-as-you-type, where each keystroke changes the
    /// query. Ignored by `.share`, which only ever merges truly identical requests.
    public var repeatKey: String? {
        get { extras?.values.repeatKey }
        set { editExtras { $0.repeatKey = newValue } }
    }
    /// How long the request lives relative to its owner and handle; `.untilFinished` by default.
    public var lifetime: Lifetime {
        get { extras?.values.lifetime ?? RequestExtras.defaults.lifetime }
        set { editExtras { $0.lifetime = newValue } }
    }
    /// Whether cancelling delivers `TernError.cancelled` (true) or no callback at all (false);
    /// nil uses the client's `reportsCancellation`. The async API always throws.
    public var reportsCancellation: Bool? {
        get { extras?.values.reportsCancellation }
        set { editExtras { $0.reportsCancellation = newValue } }
    }
    /// Called on the callback queue as the body goes up and the response comes down; always
    /// before the completion. Counts are coalesced while a call waits in the queue, so a handler
    /// sees fewer calls than chunks, but the last one it sees carries the final count. A request
    /// with a progress handler is streamed chunk by chunk (`URLSessionTransport` switches that
    /// one task to delegate delivery). Never called after the request was cancelled.
    public var progress: (@Sendable (TransferProgress) -> Void)? {
        get { extras?.values.progress }
        set { editExtras { $0.progress = newValue } }
    }
    /// The largest response body this request may receive, in bytes; nil (the default) uses
    /// the client's `maximumResponseSize`, `Int.max` lifts the limit for this request.
    public var maximumResponseSize: Int? {
        get { extras?.values.maximumResponseSize }
        set { editExtras { $0.maximumResponseSize = newValue } }
    }
    /// How this request uses the client's response cache; nil uses the client's `cachePolicy`.
    public var cachePolicy: CachePolicy? {
        get { extras?.values.cachePolicy }
        set { editExtras { $0.cachePolicy = newValue } }
    }
    /// When this request is tried again after a failure; nil (the default) uses the client's.
    public var retryPolicy: RetryPolicy? {
        get { extras?.values.retryPolicy }
        set { editExtras { $0.retryPolicy = newValue } }
    }
    /// How redirects are followed for this request; nil (the default) uses the client's.
    /// `.never` delivers a 3xx response as it is.
    public var redirectPolicy: RedirectPolicy? {
        get { extras?.values.redirectPolicy }
        set { editExtras { $0.redirectPolicy = newValue } }
    }
    /// Headers that tell callers apart for repeat strategies, added to the client's
    /// `identityHeaders` (`Authorization` and `Cookie` always count). Default empty.
    public var identityHeaders: Set<String> {
        get { extras?.values.identityHeaders ?? RequestExtras.defaults.identityHeaders }
        set { editExtras { $0.identityHeaders = newValue } }
    }
    /// The API group this request belongs to: its base URL, headers, encodings, decoder,
    /// defaults and hooks apply between the client's and the request's own (see `APIGroup`).
    /// Default nil.
    public var group: APIGroup? {
        get { extras?.values.group }
        set { editExtras { $0.group = newValue } }
    }
    /// This request's own hooks (an endpoint definition's, then any added by the caller); they
    /// run before the group's and the client's on the way out, after them on the way back
    /// (see `Hooks`). Default empty.
    public var hooks: Hooks {
        get { storedHooks ?? Hooks() }
        set { storedHooks = newValue.isEmpty ? nil : newValue }
    }
    /// The hooks, nil when there are none: copying a request without hooks retains nothing for them.
    var storedHooks: Hooks? {
        get { extras?.values.storedHooks }
        set { editExtras { $0.storedHooks = newValue } }
    }
    /// Where a download request (`Request.download`) writes its body; nil for other requests.
    var download: DownloadTarget? {
        get { extras?.values.download }
        set { editExtras { $0.download = newValue } }
    }
    /// Receives the body chunk by chunk instead of keeping it (`onChunk`, `Client.stream`).
    var chunkHandler: (@Sendable (RequestHandle?, Data, HTTPURLResponse) -> TernError?)? {
        get { extras?.values.chunkHandler }
        set { editExtras { $0.chunkHandler = newValue } }
    }
    /// Whether `chunkHandler` runs as the bytes arrive, on the exchange's thread (it then hands
    /// what it makes of them to the callback queue itself): a reader that enforces a limit does
    /// so before more is buffered.
    var readsChunksOnArrival: Bool {
        get { extras?.values.readsChunksOnArrival ?? false }
        set { editExtras { $0.readsChunksOnArrival = newValue } }
    }
    /// Receives progress with the request's handle (a `TransferDelegate`), besides `progress`.
    var progressObserver: (@Sendable (RequestHandle?, TransferProgress) -> Void)? {
        get { extras?.values.progressObserver }
        set { editExtras { $0.progressObserver = newValue } }
    }
    /// Whether the URL and body were built before (an outbox item): parameter and URL hooks do
    /// not run again.
    var isPrebuilt: Bool {
        get { extras?.values.isPrebuilt ?? false }
        set { editExtras { $0.isPrebuilt = newValue } }
    }
    /// Every setting above that is not stored inline; nil while all of them have their defaults.
    var extras: RequestExtrasBox?

    /// Creates a request with an explicit serializer.
    public init(
        _ url: String,
        method: HTTPMethod = .get,
        query: Parameters = [:],
        body: RequestBody? = nil,
        headers: [String: String] = [:],
        timeout: TimeInterval? = nil,
        serializer: ResponseSerializer<Value>
    ) {
        self.url = url
        self.method = method
        self.query = query
        self.body = body
        self.headers = headers
        self.serializer = serializer
        self.extras = timeout.map { RequestExtrasBox(RequestExtras(timeout: $0)) }
    }

    /// A copy with `tags` added.
    public func tagged(_ tags: String...) -> Request {
        var copy = self
        copy.tags.formUnion(tags)
        return copy
    }

    /// A copy with this repeat strategy, and optionally a key that makes requests identical.
    public func repeating(_ strategy: RepeatStrategy, key: String? = nil) -> Request {
        var copy = self
        copy.repeatStrategy = strategy
        copy.repeatKey = key
        return copy
    }

    /// A copy that reports upload and download progress to `handler` (see `progress`).
    public func onProgress(_ handler: @escaping @Sendable (TransferProgress) -> Void) -> Request {
        var copy = self
        copy.progress = handler
        return copy
    }

    /// A copy that also reports the request body's progress going up to `handler`, and nothing
    /// of the response: a bar that fills once, from 0 to the body's size (a 307 or 308 that sends
    /// the body again, or a retry, starts it over).
    public func onUploadProgress(_ handler: @escaping @Sendable (TransferProgress) -> Void) -> Request {
        adding(handler, for: .upload)
    }

    /// A copy that also reports the response body's progress coming down to `handler`, and
    /// nothing of the upload: from the first byte of the final response (a redirect's body is
    /// not counted) to its `Content-Length`, when announced. A retry starts it over.
    public func onDownloadProgress(_ handler: @escaping @Sendable (TransferProgress) -> Void) -> Request {
        adding(handler, for: .download)
    }

    /// This request with `handler` called for `direction`'s progress, after any handler it has.
    private func adding(_ handler: @escaping @Sendable (TransferProgress) -> Void, for direction: TransferProgress.Direction) -> Request {
        var copy = self
        let previous = progress
        copy.progress = { update in
            previous?(update)
            if update.direction == direction { handler(update) }
        }
        return copy
    }

    /// A copy that is cancelled when `owner` is deallocated (`Lifetime.owner`).
    public func owned(by owner: AnyObject) -> Request {
        var copy = self
        copy.lifetime = .owner(owner)
        return copy
    }
}

extension Request where Value == Data {
    /// A copy that hands the response body to `handler` chunk by chunk as it arrives, on the
    /// callback queue and in order, instead of keeping it: the response the completion receives
    /// has an empty body. For long-lived and incremental responses (server-sent events,
    /// line-delimited JSON, a model streaming tokens); `Client.stream` offers the same as an
    /// `AsyncSequence`. The status (and content type) is validated when the head arrives: a
    /// failing response keeps its body for its `TernError` and delivers no chunk. The idle
    /// `timeout` counts from the last chunk (a `deadline` still bounds the whole stream), and a request that delivered
    /// chunks is never retried (they would be delivered twice). The size limit
    /// (`maximumResponseSize`) counts every streamed byte: the stream ends with
    /// `.responseTooLarge` as it crosses it; a long-lived stream lifts it (`Int.max`).
    public func onChunk(_ handler: @escaping @Sendable (Data) -> Void) -> Request {
        var copy = self
        copy.chunkHandler = { _, chunk, _ in
            handler(chunk)
            return nil
        }
        return copy
    }
}

extension Request where Value: Decodable {
    /// A request whose JSON response decodes to `Value` with a plain `JSONDecoder`.
    public init(
        _ url: String, method: HTTPMethod = .get, query: Parameters = [:], body: RequestBody? = nil,
        headers: [String: String] = [:], timeout: TimeInterval? = nil
    ) {
        self.init(url, method: method, query: query, body: body, headers: headers, timeout: timeout, serializer: .decodable())
    }
}

extension Request where Value == JSON {
    /// A request whose response is untyped `JSON`.
    public init(
        _ url: String, method: HTTPMethod = .get, query: Parameters = [:], body: RequestBody? = nil,
        headers: [String: String] = [:], timeout: TimeInterval? = nil
    ) {
        self.init(url, method: method, query: query, body: body, headers: headers, timeout: timeout, serializer: .json)
    }
}

extension Request where Value == Data {
    /// A request whose response is the raw body.
    public init(
        _ url: String, method: HTTPMethod = .get, query: Parameters = [:], body: RequestBody? = nil,
        headers: [String: String] = [:], timeout: TimeInterval? = nil
    ) {
        self.init(url, method: method, query: query, body: body, headers: headers, timeout: timeout, serializer: .data)
    }
}

extension Request where Value == String {
    /// A request whose response is text in the response's charset (UTF-8 by default).
    public init(
        _ url: String, method: HTTPMethod = .get, query: Parameters = [:], body: RequestBody? = nil,
        headers: [String: String] = [:], timeout: TimeInterval? = nil
    ) {
        self.init(url, method: method, query: query, body: body, headers: headers, timeout: timeout, serializer: .string())
    }
}
