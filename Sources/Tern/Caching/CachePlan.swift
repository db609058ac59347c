import Foundation

/// One request's dealings with the cache: its policy and key, the entry its read found, how a
/// network outcome is resolved against that entry (304 → revalidated, failure → stale) and
/// whether the network response is stored.
/// Thread safety: safe to use from any thread.
final class CachePlan: Sendable {
    let policy: CachePolicy
    let key: CacheKey
    let cache: ResponseCache
    /// The request's headers: what a varying response's variants are chosen by.
    let requestHeaders: [String: String]
    /// The request's own `Cache-Control`, read when the server decides freshness.
    let requestDirectives: CacheDirectives
    /// Starts one background revalidation of this request's entry (`stale-while-revalidate`).
    private let revalidation: (@Sendable () -> Void)?
    private let found = Locked<CachedResponse?>(nil)
    /// Whether the attempt is a revalidation this plan made conditional.
    private let conditionalSent = Locked(false)

    init(
        policy: CachePolicy, key: CacheKey, cache: ResponseCache, requestHeaders: [String: String] = [:],
        revalidation: (@Sendable () -> Void)? = nil
    ) {
        self.policy = policy
        self.key = key
        self.cache = cache
        self.requestHeaders = requestHeaders
        self.requestDirectives =
            policy.freshness == .server ? CacheDirectives(requestHeaders.headerValue(named: "Cache-Control")) : .none
        self.revalidation = revalidation
    }

    /// The entry that answers this request in `level` (memory, or memory then disk): the key's
    /// response, or — when the response varied — its variant for this request's headers; nil
    /// when there is none or it was stored for other header values.
    func entry(in level: (CacheKey) -> CachedResponse?) -> CachedResponse? {
        guard let found = level(key) else { return nil }
        guard let names = found.variantNames else { return found.matches(requestHeaders) ? found : nil }
        // The variant's key holds these values: a variant found there (its key text compared) is theirs.
        return level(key.variant(CacheVariant(names: names, requestHeaders: requestHeaders)))
    }

    /// Memory, then disk (blocking: call it off the main thread).
    func entryInAnyLevel() -> CachedResponse? {
        entry { cache.memoryEntry(for: $0) ?? cache.diskEntry(for: $0) }
    }

    /// Where `entry` is stored: its variant's key, or the request's.
    func storageKey(of entry: CachedResponse) -> CacheKey {
        entry.variant.map(key.variant) ?? key
    }

    /// Whether the request reads the cache before the network.
    var reads: Bool { readMode != .networkOnly }

    /// The read mode the request runs with: the policy's, or cache-only for a request that says
    /// `only-if-cached`.
    var readMode: CachePolicy.ReadMode { requestDirectives.onlyIfCached ? .cacheOnly : policy.read }

    /// Whether the exchange revalidates an entry (its request made conditional here): identical
    /// revalidations share one exchange.
    var isRevalidating: Bool { conditionalSent.withLock { $0 } }

    /// Starts the background revalidation of a stale entry just answered with, unless one for
    /// the same entry is already running.
    func revalidateInBackground() {
        guard let revalidation, cache.beginRevalidating(key.text) else { return }
        revalidation()
    }

    /// Whether storing a network response may be slow: a disk write, or a store predicate (user code).
    var mayBeSlowToStore: Bool { policy.write.contains(.disk) || policy.shouldStore != nil }

    /// Keeps the entry the read found, for revalidation and stale-on-error.
    func remember(_ entry: CachedResponse?) {
        found.withLock { $0 = entry }
    }

    /// `request` with `If-None-Match` / `If-Modified-Since` from `entry`'s validators, if it has any.
    func conditional(_ request: URLRequest, on entry: CachedResponse?) -> URLRequest {
        guard let entry, entry.hasValidator else { return request }
        conditionalSent.withLock { $0 = true }
        var request = request
        if let etag = entry.header("ETag") { request.setValue(etag, forHTTPHeaderField: "If-None-Match") }
        if let date = entry.header("Last-Modified") { request.setValue(date, forHTTPHeaderField: "If-Modified-Since") }
        return request
    }

    /// Removes an entry that cannot answer and nothing can use: no validator, and no stale use left.
    func dropIfUseless(_ entry: CachedResponse, use: CacheUse) {
        guard use == .revalidate, !isWorthKeeping(entry) else { return }
        cache.remove(storageKey(of: entry))
    }

    /// Resolves a network outcome against the cached entry: a 304 becomes the cached response
    /// (`.revalidated`, and the entry is refreshed); a transport failure, a timeout or a 5xx
    /// becomes the cached response (`.stale`) when the policy serves stale entries.
    func resolve(_ outcome: Result<RawResponse, TernError>) -> Result<RawResponse, TernError> {
        switch outcome {
        case .success(let raw) where raw.source == .network && raw.head.statusCode == 304:
            // A request that joined a shared call another request made conditional has no entry
            // of its own yet: the one in the cache is the one the 304 confirms.
            guard let entry = found.withLock({ $0 }) ?? entryInAnyLevel() else { return outcome }
            let refreshed = entry.revalidated(by: raw.head, exchangeDuration: raw.metrics?.total ?? 0)
            if !policy.write.isEmpty { cache.store(refreshed, for: storageKey(of: entry), in: policy.write) }
            // The revalidating exchange's metrics stay: it was a network round trip.
            return .success(refreshed.raw(.revalidated, metrics: raw.metrics))
        case .success(let raw) where raw.source == .network && (500..<600).contains(raw.head.statusCode):
            return stale() ?? outcome
        case .failure(.transport), .failure(.timedOut):
            return stale() ?? outcome
        default:
            return outcome
        }
    }

    private func stale() -> Result<RawResponse, TernError>? {
        guard policy.servesStaleOnError || policy.freshness == .server else { return nil }
        // A request that read the cache knows what is there: no second (disk) read for a miss.
        let remembered = found.withLock { $0 }
        guard let entry = remembered ?? (reads && policy.freshness == .server ? nil : entryInAnyLevel()),
            mayServeOnError(entry)
        else { return nil }
        return .success(entry.raw(.stale))
    }

    /// Stores a network response when the policy writes, HTTP allows (`no-store` in the response,
    /// or in the request when the server decides freshness) and the store predicate agrees. Runs
    /// after decoding, off the transport's thread when it may be slow.
    @discardableResult
    func storeIfAllowed<Value>(_ response: Response<Value>) -> Bool {
        guard response.source == .network, !policy.write.isEmpty,
            (200..<300).contains(response.statusCode), response.statusCode != 206, !requestDirectives.noStore
        else { return false }
        if let control = response.header("Cache-Control")?.lowercased(), control.contains("no-store") { return false }
        // A response that varies is stored as a variant, found through an index at the key;
        // one that varies on `*` matches no later request and is not stored.
        var names: [String]?
        var variant: CacheVariant?
        if let vary = response.header("Vary") {
            guard let varying = CacheVariant.names(inVary: vary) else { return false }
            // The headers the request was sent with (adapters' included): a response is stored
            // for the request that elicited it.
            names = varying
            variant = CacheVariant(names: varying, requestHeaders: response.request.allHTTPHeaderFields ?? requestHeaders)
        }
        let storageKey = variant.map(key.variant) ?? key
        let entry = CachedResponse(
            response.head, body: response.data, key: storageKey, variant: variant, exchangeDuration: response.metrics?.total ?? 0)
        if policy.freshness == .server, !isWorthStoring(entry) { return false }
        if let shouldStore = policy.shouldStore,
            !shouldStore(StoreCandidate(httpResponse: response.httpResponse, data: response.data, value: response.value))
        {
            return false
        }
        cache.store(entry, for: storageKey, in: policy.write)
        if let names { cache.store(.variantIndex(varyingOn: names, key: key, url: entry.url), for: key, in: policy.write) }
        return true
    }
}

extension CachePlan {
    /// Whether a response is of any use stored, by what it says: fresh for a while, or with a
    /// validator, or with a stale window (a response that is neither is never read back).
    fileprivate func isWorthStoring(_ entry: CachedResponse) -> Bool {
        let freshness = entry.freshness
        if freshness.lifetime > freshness.initialAge || entry.hasValidator { return true }
        let directives = freshness.directives
        return !freshness.forbidsStale
            && (policy.servesStaleOnError || directives.staleIfError != nil || directives.staleWhileRevalidate != nil)
    }
}

extension CachedResponse {
    /// The entry as a raw response for the delivery path, `now`: a head from its parts (Foundation's
    /// `HTTPURLResponse`, which costs about 10 µs to build on Linux, only if something asks),
    /// carrying the entry's current age as `Age` in place of the one it arrived with (RFC 9111
    /// §4: whole seconds, at most 2³¹).
    func raw(_ source: ResponseSource, metrics: Metrics? = nil, now: Date = Date()) -> RawResponse {
        var fields = headers
        if let arrived = fields.keys.first(where: { ResponseHead.sameName($0, "Age") }) { fields[arrived] = nil }
        let age = freshness.age(resident: now.timeIntervalSince(storedAt))
        fields["Age"] = String(Int(min(age.rounded(.down), 2_147_483_648)))
        return RawResponse(
            head: ResponseHead(url: url, statusCode: status, headerFields: fields), data: body, source: source, metrics: metrics)
    }
}

extension Client {
    /// The cache plan for a request, or nil when its policy does not touch the cache or the
    /// request cannot be cached (methods other than GET, HEAD and POST — GET and HEAD only when
    /// the server decides freshness; raw-data uploads).
    func cachePlan<Value>(for request: Request<Value>, _ urlRequest: URLRequest, policy: CachePolicy) -> CachePlan? {
        let methods: [HTTPMethod] = policy.freshness == .server ? [.get, .head] : [.get, .head, .post]
        guard policy.isActive, methods.contains(request.method) else { return nil }
        if case .data = request.body?.content { return nil }
        guard let key = CacheKey(urlRequest, policy: policy) else { return nil }
        let revalidation = policy.freshness == .server ? backgroundRevalidation(of: request, policy: policy, key: key) : nil
        return CachePlan(
            policy: policy, key: key, cache: responseCache, requestHeaders: urlRequest.allHTTPHeaderFields ?? [:],
            revalidation: revalidation)
    }

    /// What revalidates `request`'s stale entry in the background: the same request, with every
    /// hook, that revalidates whatever it finds, stores the outcome, and tells nobody.
    private func backgroundRevalidation<Value>(of request: Request<Value>, policy: CachePolicy, key: CacheKey) -> @Sendable () -> Void {
        { [weak self] in
            guard let self else { return }
            var revalidating = request
            var policy = policy
            policy.read = .cacheElseNetwork
            policy.revalidatesAlways = true
            revalidating.cachePolicy = policy
            revalidating.repeatStrategy = .allow
            revalidating.lifetime = .untilFinished
            revalidating.progress = nil
            revalidating.progressObserver = nil
            let cache = responseCache
            _ = perform(revalidating, queue: .immediate) { _, _ in cache.endRevalidating(key.text) }
        }
    }
}

/// RFC 9111 §4.4: a successful unsafe request (a method other than GET, HEAD, OPTIONS and TRACE
/// answered with a non-error status) invalidates what the cache holds for its URL, and for the
/// URLs its `Location` and `Content-Location` name on the same origin. An unsafe request whose own
/// policy stores its response is a read to the app (an API that answers queries over POST) and
/// invalidates nothing.
enum CacheInvalidation {
    /// Checked on every response: one array, not one per call.
    private static let safeMethods: [HTTPMethod] = [.get, .head, .options, .trace]

    /// The URLs whose entries `response` to a `method` request for `target` makes stale; empty
    /// when it changes nothing.
    static func urls(method: HTTPMethod, target: URL?, response: ResponseHead, storesResponse: Bool) -> [URL] {
        guard !storesResponse, !safeMethods.contains(method), let target,
            (200..<400).contains(response.statusCode)
        else { return [] }
        let base = response.url ?? target
        let named = ["Location", "Content-Location"].compactMap { name in
            response.headerFields.headerValue(named: name).flatMap { URL(string: $0, relativeTo: base)?.absoluteURL }
        }
        return [target] + named.filter { RedirectStage.sameOrigin($0, target) }
    }
}
