import Foundation

/// Knows how to attach a credential to a request, recognise when the server no longer accepts
/// it, and get a new one. `Authentication` does the bookkeeping around it.
/// Thread safety: called from several threads at once; must be `Sendable`.
public protocol Authenticator: Sendable {
    /// The credential: a token, a token pair, a session.
    associatedtype Credential: Sendable
    /// Puts `credential` on `request` (e.g. `Authorization: Bearer …`).
    func apply(_ credential: Credential, to request: inout URLRequest)
    /// A new credential in place of `credential`; called once however many requests failed.
    /// - Throws: Any error; every waiting request then fails with
    ///   `TernError.rejected(by: "Authentication", error: AuthenticationError.refreshFailed(error))`.
    func refresh(_ credential: Credential) async throws -> Credential
    /// Whether `response` says the credential is no longer accepted. Default: status 401; a
    /// business code in the body works the same (`response.json?["code"]`).
    func isAuthenticationFailure(_ response: ResponseContext) -> Bool
}

extension Authenticator {
    /// Status 401.
    public func isAuthenticationFailure(_ response: ResponseContext) -> Bool { response.statusCode == 401 }
}

/// Why `Authentication` failed a request; carried by `TernError.rejected(by: "Authentication", error:)`.
public enum AuthenticationError: Error, Sendable, CustomStringConvertible {
    /// The refresh threw this error.
    case refreshFailed(any Error)
    /// The credential was refreshed `count` times within `window` seconds and the server still
    /// refuses it: the loop guard stopped.
    case tooManyRefreshes(count: Int, window: TimeInterval)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .refreshFailed(let error): "the credential could not be refreshed: \(error)"
        case .tooManyRefreshes(let count, let window): "refreshed \(count) times in \(Int(window)) s and still refused"
        }
    }
}

/// Token refresh for a client or a group: attaches the credential to every attempt, and when a
/// response says it expired, refreshes it once while every failing request waits (single flight),
/// then sends them again with the new one. Requests sent during a refresh wait for it instead of
/// going out with the old credential; a failed refresh fails every waiting request with a typed
/// error, and every request sent before it failed whose refusal comes later (a request sent after
/// it may try a refresh of its own); a loop guard stops after `refreshLimit` refreshes within `window` seconds.
/// ```swift
/// let auth = Authentication(TokenAuthenticator(), credential: storedToken)
/// let api = Client(baseURL: "https://api.example.com") { $0.hooks.authenticate(with: auth) }
/// ```
/// Install it with `Hooks.authenticate(with:)`, which makes it an adapter and a response rule.
/// Thread safety: safe to use from any thread; its state changes under one lock.
public final class Authentication<Base: Authenticator>: RequestAdapter, ResponseRule {
    private struct State {
        var credential: Base.Credential
        /// The refresh in flight and the gate its failed requests wait at.
        var refresh: (task: Task<Base.Credential, any Error>, gate: RestartGate)?
        /// When recent refreshes started, for the loop guard.
        var refreshes: [Date] = []
        /// The last refresh's failure and when it ended: requests sent before then fail with it.
        var failure: (error: any Error, ended: UInt64)?
    }

    /// What a refused response leads to, decided under the lock.
    private enum Step {
        case wait(RestartGate), again, stop(Int), refresh(RestartGate), failed(any Error)
    }

    private let base: Base
    private let state: Locked<State>
    /// At most this many refreshes within `window`. Default 3.
    public let refreshLimit: Int
    /// The loop guard's window in seconds. Default 30.
    public let window: TimeInterval

    /// Creates the authentication around `authenticator`, starting with `credential`.
    public init(_ authenticator: Base, credential: Base.Credential, refreshLimit: Int = 3, window: TimeInterval = 30) {
        self.base = authenticator
        self.state = Locked(State(credential: credential))
        self.refreshLimit = refreshLimit
        self.window = window
    }

    /// `"Authentication"`.
    public var name: String { "Authentication" }

    /// The credential now; setting it (after a login) applies to attempts from now on.
    public var credential: Base.Credential {
        get { state.withLock { $0.credential } }
        set {
            state.withLock {
                $0.credential = newValue; $0.failure = nil
            }
        }
    }

    /// Attaches the credential, after waiting for a refresh in flight.
    public func adapt(_ request: URLRequest, for attempt: AttemptInfo) async throws -> URLRequest {
        let (credential, refresh) = state.withLock { ($0.credential, $0.refresh?.task) }
        var request = request
        if let refresh {
            do {
                base.apply(try await refresh.value, to: &request)
            } catch {
                throw AuthenticationError.refreshFailed(error)
            }
        } else {
            base.apply(credential, to: &request)
        }
        return request
    }

    /// Holds a request the server refused for its credential until the refresh is done; sends it
    /// again at once if it went out with a credential that has been replaced since.
    public func decide(_ response: ResponseContext) -> ResponseDecision {
        guard base.isAuthenticationFailure(response) else { return .proceed }
        let step = state.withLock { state -> Step in
            if let refresh = state.refresh { return .wait(refresh.gate) }
            var current = response.request
            base.apply(state.credential, to: &current)
            if current.allHTTPHeaderFields != response.request.allHTTPHeaderFields { return .again }
            if let failure = state.failure, response.requestStarted < failure.ended { return .failed(failure.error) }
            let now = Date()
            state.refreshes.removeAll { now.timeIntervalSince($0) > window }
            guard state.refreshes.count < refreshLimit else { return .stop(state.refreshes.count) }
            state.refreshes.append(now)
            let gate = RestartGate(oneShot: true)
            let old = state.credential
            state.refresh = (Task { try await base.refresh(old) }, gate)
            return .refresh(gate)
        }
        switch step {
        case .wait(let gate):
            return .restart(after: gate)
        case .again:
            let gate = RestartGate(oneShot: true)
            gate.restartAll()
            return .restart(after: gate)
        case .failed(let error):
            return .fail(.rejected(by: name, error: AuthenticationError.refreshFailed(error)))
        case .stop(let count):
            return .fail(.rejected(by: name, error: AuthenticationError.tooManyRefreshes(count: count, window: window)))
        case .refresh(let gate):
            finishRefresh(opening: gate)
            return .restart(after: gate)
        }
    }

    /// Stores the refresh's outcome when it ends, then restarts or fails its waiting requests.
    private func finishRefresh(opening gate: RestartGate) {
        guard let task = state.withLock({ $0.refresh?.task }) else { return }
        Task {
            let outcome = await task.result
            state.withLock { state in
                switch outcome {
                case .success(let credential): state.credential = credential
                case .failure(let error): state.failure = (error, DispatchTime.now().uptimeNanoseconds)
                }
                state.refresh = nil
            }
            switch outcome {
            case .success: gate.restartAll()
            case .failure(let error): gate.dropAll(with: .rejected(by: name, error: AuthenticationError.refreshFailed(error)))
            }
        }
    }
}

extension Hooks {
    /// Installs `authentication` as an adapter (attaches the credential) and a response rule
    /// (refreshes it when the server refuses it).
    public mutating func authenticate<Base: Authenticator>(with authentication: Authentication<Base>) {
        adapters.append(authentication)
        rules.append(authentication)
    }
}
