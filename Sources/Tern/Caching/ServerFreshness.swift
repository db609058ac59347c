import Foundation

/// What a stored response's own headers say about its freshness (RFC 9111 §4.2), worked out once
/// when it is stored or read from disk, so that a hit only does arithmetic.
/// Thread safety: a value type, safe to share.
struct ServerFreshness: Sendable {
    /// The response's `Cache-Control` directives.
    let directives: CacheDirectives
    /// Seconds the response stays fresh, counted from when it was generated: `max-age`, else
    /// `Expires` − `Date`, else the heuristic.
    let lifetime: TimeInterval
    /// Its age on arrival (§4.2.3's corrected initial age): the larger of its `Age` (plus the
    /// exchange's duration) and the time since its `Date`.
    let initialAge: TimeInterval

    /// The heuristic's share of the time since `Last-Modified` (RFC 9111 §4.2.2 suggests 10 %).
    static let heuristicFraction = 0.1
    /// The most the heuristic grants: one day.
    static let heuristicLimit: TimeInterval = 86_400

    /// The freshness of a response of `status` for `url` with `headers`, received at `received`
    /// after an exchange of `exchangeDuration` seconds; `knownAge`: its initial age as worked out
    /// when it was stored (a response read back from disk).
    init(
        headers: [String: String], url: URL, status: Int, received: Date, exchangeDuration: TimeInterval = 0,
        initialAge knownAge: TimeInterval? = nil
    ) {
        let directives = CacheDirectives(headers.headerValue(named: "Cache-Control"))
        self.directives = directives
        // A response without `Date` is dated when it arrived (RFC 9110 §6.6.1).
        let date = headers.headerValue(named: "Date").flatMap(HTTPDate.parse) ?? received
        if let knownAge {
            initialAge = knownAge
        } else {
            // `Age` is one delta-seconds: of a list the first member counts, and an invalid
            // value is ignored (RFC 9111 §5.1).
            let ageValue =
                headers.headerValue(named: "Age").flatMap {
                    CacheDirectives.seconds($0.split(separator: ",").first?.trimmingCharacters(in: .whitespaces))
                } ?? 0
            initialAge = max(0, received.timeIntervalSince(date), ageValue + max(0, exchangeDuration))
        }
        if let maxAge = directives.maxAge {
            lifetime = maxAge
        } else if let expires = headers.headerValue(named: "Expires") {
            // An `Expires` that is not a date (`0`, `-1`) means already expired.
            lifetime = HTTPDate.parse(expires).map { max(0, $0.timeIntervalSince(date)) } ?? 0
        } else if (200..<300).contains(status), url.query == nil,
            let modified = headers.headerValue(named: "Last-Modified").flatMap(HTTPDate.parse)
        {
            // Heuristic freshness, only where nothing explicit was said; like OkHttp, not for a
            // URL with a query (it names a computation more often than a document).
            lifetime = min(Self.heuristicLimit, max(0, date.timeIntervalSince(modified)) * Self.heuristicFraction)
        } else {
            lifetime = 0
        }
    }

    /// The age of the response `resident` seconds after it was stored.
    func age(resident: TimeInterval) -> TimeInterval {
        initialAge + max(0, resident)
    }

    /// Seconds past its lifetime `resident` seconds after it was stored (negative while fresh).
    func staleness(resident: TimeInterval) -> TimeInterval {
        age(resident: resident) - lifetime
    }

    /// Whether the response forbids any use once stale (`must-revalidate`, `no-cache`).
    var forbidsStale: Bool { directives.mustRevalidate || directives.noCache }
}

/// How a stored response may serve one request, by its read of freshness.
enum CacheUse: Equatable {
    /// Fresh: it answers.
    case fresh
    /// Stale, but the request or the response allows it to answer at once; `revalidate`: a
    /// background revalidation should follow (`stale-while-revalidate`).
    case stale(revalidate: Bool)
    /// It must be revalidated (or replaced) before it can answer.
    case revalidate
}

extension CachePlan {
    /// How `entry` may serve this request `now`: the policy's `maxAge` (what the app says) or
    /// the response's and the request's `Cache-Control` (what the server says, RFC 9111 §4).
    func use(of entry: CachedResponse, now: Date = Date()) -> CacheUse {
        guard policy.freshness == .server else {
            return entry.isFresh(maxAge: policy.maxAge, now: now) ? .fresh : .revalidate
        }
        if policy.revalidatesAlways || requestDirectives.noCache { return .revalidate }
        let freshness = entry.freshness
        let age = freshness.age(resident: now.timeIntervalSince(entry.storedAt))
        if freshness.directives.noCache { return .revalidate }
        if let maxAge = requestDirectives.maxAge, age > maxAge { return .revalidate }
        if age + (requestDirectives.minFresh ?? 0) < freshness.lifetime { return .fresh }
        if freshness.forbidsStale { return .revalidate }
        let staleness = age - freshness.lifetime
        if let maxStale = requestDirectives.maxStale, staleness <= maxStale { return .stale(revalidate: false) }
        if let window = freshness.directives.staleWhileRevalidate, staleness <= window { return .stale(revalidate: true) }
        return .revalidate
    }

    /// Whether `entry` may answer in place of a failed exchange (a transport error or a 5xx):
    /// always with `servesStaleOnError` when the app decides freshness; when the server does,
    /// within `stale-if-error` (the response's or the request's) or with `servesStaleOnError`,
    /// unless the response forbids stale use.
    func mayServeOnError(_ entry: CachedResponse, now: Date = Date()) -> Bool {
        guard policy.freshness == .server else { return policy.servesStaleOnError }
        let freshness = entry.freshness
        guard !freshness.forbidsStale else { return false }
        if policy.servesStaleOnError { return true }
        let staleness = freshness.staleness(resident: now.timeIntervalSince(entry.storedAt))
        let window = max(freshness.directives.staleIfError ?? -1, requestDirectives.staleIfError ?? -1)
        return staleness <= window
    }

    /// Whether an entry that cannot answer now is still worth keeping: it has a validator, is
    /// still fresh by the response (a request's own directives refused it), or can answer when
    /// the server fails.
    func isWorthKeeping(_ entry: CachedResponse, now: Date = Date()) -> Bool {
        if entry.hasValidator { return true }
        guard policy.freshness == .server else { return policy.servesStaleOnError }
        let freshness = entry.freshness
        let staleness = freshness.staleness(resident: now.timeIntervalSince(entry.storedAt))
        if staleness < 0 { return true }
        guard !freshness.forbidsStale else { return false }
        if policy.servesStaleOnError { return true }
        let window = max(freshness.directives.staleIfError ?? -1, freshness.directives.staleWhileRevalidate ?? -1)
        return staleness <= window
    }
}
