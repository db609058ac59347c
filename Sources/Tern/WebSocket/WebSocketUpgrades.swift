import Foundation

/// The upgrade requests a socket sent, for its response rules: a refused upgrade (a 401, say) is
/// shown to the request's `ResponseRule`s as any response is, so `Authentication` refreshes the
/// token and the socket connects again with it once its gate restarts.
/// Thread safety: safe to use from any thread (one lock).
final class WebSocketUpgrades: Sendable {
    private let rules: [any ResponseRule]
    private let url: URL
    private let tags: Set<String>
    /// The last upgrade request, when it went out, and its attempt number.
    private let last = Locked<(request: URLRequest, started: UInt64, attempt: Int)?>(nil)

    init(rules: [any ResponseRule], url: URL, tags: Set<String>) {
        self.rules = rules
        self.url = url
        self.tags = tags
    }

    /// Whether any rule may look at a refusal.
    var hasRules: Bool { !rules.isEmpty }

    /// A connection starts with `request` (its adapters applied).
    func sent(_ request: URLRequest) {
        let now = DispatchTime.now().uptimeNanoseconds
        last.withLock { $0 = (request, now, ($0?.attempt ?? 0) + 1) }
    }

    /// What the rules make of `ending`: only a refused upgrade is theirs to judge.
    func review(_ ending: WebSocketEnding) -> ReconnectingDriver.Review {
        guard case .failed(.unacceptableStatus(let status, let body, let headers, _)) = ending, let sent = last.withLock({ $0 }),
            let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers)
        else { return .asIs }
        let context = ResponseContext(
            request: sent.request, response: response, body: body, attempt: sent.attempt, tags: tags, requestStarted: sent.started)
        for rule in rules {
            switch rule.decide(context) {
            case .proceed: continue
            case .succeed: return .asIs
            case .fail(let error): return .end(.failed(error))
            case .restart(let gate): return .reconnect(after: gate)
            }
        }
        return .asIs
    }
}
