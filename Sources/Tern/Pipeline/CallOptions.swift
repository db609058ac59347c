import Foundation

/// Every option of one request, resolved once when it is sent, by one rule: the request's own
/// value, else its API group's, else its client's (whose configuration holds the defaults).
/// Every stage reads its options here; nothing else resolves one.
///
/// Options an API group does not set (`redirectPolicy`, `maximumResponseSize`, the repeat
/// strategy, cancellation reporting) go from the request straight to the client.
/// Thread safety: a value type, safe to share.
struct CallOptions: Sendable {
    /// The request's own settings beside its group's and client's (base URL, headers, encodings:
    /// what building the `URLRequest` reads).
    let settings: RequestSettings
    /// The idle timeout of each attempt in seconds (`.infinity`: none).
    let timeout: TimeInterval
    /// The whole request's deadline in seconds (`.infinity`: none).
    let deadline: TimeInterval
    let validation: ResponseValidation
    let retryPolicy: RetryPolicy
    let redirectPolicy: RedirectPolicy
    /// The largest body the request takes, in bytes; nil for none (a limit of `Int.max` lifts it).
    let sizeLimit: Int?
    let repeatStrategy: RepeatStrategy
    /// Whether a cancelled request gets its `.cancelled` callback.
    let reportsCancellation: Bool
    /// The request's tags and its group's.
    let tags: Set<String>
    /// The headers that tell callers apart when attempts are shared (`.share` only).
    let identityHeaders: Set<String>
    /// The connection this request opens, when it is an upgrade (a WebSocket's).
    let upgrade: (any ConnectionUpgrade)?

    init<Value>(_ request: Request<Value>, client: Client, alwaysReportsCancellation: Bool = false) {
        // `client.configuration.x`, not a local copy of the configuration: copying the whole struct
        // retains and releases each of its fields (about 0.3 µs per request, measured).
        // The group's settings are read once: a base URL switched from now on does not touch this request.
        let settings = RequestSettings(client, group: request.group?.snapshot)
        self.settings = settings
        timeout = request.timeout ?? settings.timeout
        deadline = request.deadline ?? settings.deadline
        validation = request.validation ?? settings.validation
        retryPolicy = request.retryPolicy ?? settings.retryPolicy
        redirectPolicy = request.redirectPolicy ?? client.configuration.redirectPolicy
        let limit = request.maximumResponseSize ?? client.configuration.maximumResponseSize
        sizeLimit = limit == Int.max ? nil : limit
        repeatStrategy = request.repeatStrategy ?? client.configuration.repeatStrategy
        reportsCancellation = alwaysReportsCancellation || (request.reportsCancellation ?? client.configuration.reportsCancellation)
        tags = settings.tags.isEmpty ? request.tags : request.tags.union(settings.tags)
        upgrade = request.extras?.values.upgrade
        identityHeaders = repeatStrategy == .share ? client.configuration.identityHeaders.union(request.identityHeaders) : []
    }

    /// The cache policy of `request`, which these options were resolved for. Read once, when the
    /// call plans its cache use, so not kept with the options every stage holds.
    func cachePolicy<Value>(of request: Request<Value>) -> CachePolicy {
        request.cachePolicy ?? settings.cachePolicy
    }
}
