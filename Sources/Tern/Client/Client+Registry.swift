import Foundation

/// The requests a client has in flight: a request enters when it is sent and leaves the moment
/// it finishes, so the registry never holds a finished request.
struct Registry {
    var lifecycles: [UInt64: RequestLifecycle] = [:]
}

/// A snapshot of one request in flight, for debugging and tests.
/// Thread safety: a value type, safe to share.
public struct RunningRequest: Sendable, CustomStringConvertible {
    /// The request's id (`RequestHandle.id`).
    public let id: UInt64
    /// Its method.
    public let method: HTTPMethod
    /// Its full URL.
    public let url: URL?
    /// Its tags.
    public let tags: Set<String>
    /// Where it stood when the snapshot was taken.
    public let phase: RequestHandle.Phase

    /// `GET https://… [tags] (phase)`.
    public var description: String {
        "\(method) \(url?.absoluteString ?? "?")\(tags.isEmpty ? "" : " " + tags.sorted().description) (\(phase))"
    }
}

/// How `cancel(url:matching:)` compares URLs.
/// Thread safety: a value type, safe to share.
public enum URLMatch: Sendable {
    /// Same scheme, host, port, path and query (query pairs compared in sorted order).
    case exact
    /// Same scheme, host, port and path, whatever the query.
    case ignoringQuery
}

extension Client {
    /// The requests in flight right now, oldest first.
    public var runningRequests: [RunningRequest] {
        registry.withLock { $0.lifecycles.values.sorted { $0.id < $1.id } }
            .map { RunningRequest(id: $0.id, method: $0.method, url: $0.url, tags: $0.tags, phase: $0.read(\.phase)) }
    }

    /// Cancels every request in flight whose URL matches `url` (an AFNetworking-style manager's `cancelRequestForURL:`).
    /// - Parameters:
    ///   - url: An absolute URL or a path relative to the base URL, as in a `Request`.
    ///   - matching: `.exact` (the default: the query counts, in any order) or `.ignoringQuery`.
    /// - Returns: How many requests were cancelled; 0 for a URL that cannot be built.
    @discardableResult
    public func cancel(url: String, matching: URLMatch = .exact) -> Int {
        guard
            let target = try? URLBuilder.makeURL(
                url, baseURL: configuration.baseURL, parameters: [:],
                encoding: configuration.parameterEncoding)
        else { return 0 }
        let keepingQuery = matching == .exact
        let key = RequestIdentity.canonical(target, keepingQuery: keepingQuery)
        return cancel { lifecycle in lifecycle.url.map { RequestIdentity.canonical($0, keepingQuery: keepingQuery) } == key }
    }

    /// Cancels every request in flight that carries `tag`. Their `.cancelled` callbacks run after
    /// this returns, never inside it.
    /// - Returns: How many requests were cancelled.
    @discardableResult
    public func cancel(tag: String) -> Int {
        cancel { $0.tags.contains(tag) }
    }

    /// Cancels every request of this client in flight (an AFNetworking-style manager's `cancelAllRequests`).
    /// - Returns: How many requests were cancelled.
    @discardableResult
    public func cancelAll() -> Int {
        cancel { _ in true }
    }

    private func cancel(where matches: (RequestLifecycle) -> Bool) -> Int {
        let chosen = registry.withLock { $0.lifecycles.values.filter(matches) }
        for lifecycle in chosen { lifecycle.cancel(.explicit) }
        return chosen.count
    }

    // MARK: - Engine side

    /// What registering a request under its repeat strategy decided.
    enum Admission {
        /// Run it; cancel these older identical requests first. (A `.share` request runs too: its
        /// attempts join shared exchanges as they start.)
        case run(superseding: [RequestLifecycle])
        /// Do not send it: an identical request is in flight.
        case duplicate
    }

    /// Enters `lifecycle` in the registry, applying its repeat strategy in the same critical section
    /// as the lookup (no check-then-act race between two identical sends).
    func admit(_ lifecycle: RequestLifecycle, strategy: RepeatStrategy) -> Admission {
        let admission = registry.withLock { registry -> Admission in
            // Only cancel-older and ignore-newer look for identical requests in flight.
            func twins() -> [RequestLifecycle] {
                lifecycle.identity.map { identity in registry.lifecycles.values.filter { $0.identity == identity } } ?? []
            }
            switch strategy {
            case .allow, .share:
                registry.lifecycles[lifecycle.id] = lifecycle
                return .run(superseding: [])
            case .cancelOlder:
                let older = twins()
                registry.lifecycles[lifecycle.id] = lifecycle
                return .run(superseding: older)
            case .ignoreNewer:
                guard twins().isEmpty else { return .duplicate }
                registry.lifecycles[lifecycle.id] = lifecycle
                return .run(superseding: [])
            }
        }
        return admission
    }

    /// Takes a finished request out of the registry (admitted requests end here).
    func leave(_ lifecycle: RequestLifecycle) {
        _ = registry.withLock { $0.lifecycles.removeValue(forKey: lifecycle.id) }
    }
}
