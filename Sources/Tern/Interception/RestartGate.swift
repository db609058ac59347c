import Foundation

/// Holds the requests a `ResponseRule` stopped (`ResponseDecision.restart(after:)`) until the app
/// says what becomes of them: `restartAll()` sends each again (after the user logged in, say),
/// `dropAll(with:)` fails each with an error (on logout). Every held request keeps its handle,
/// can be cancelled while it waits, and its callback runs exactly once in the end.
///
/// A gate is reusable: requests stopped after `restartAll()` wait for the next call.
/// ```swift
/// let login = RestartGate()
/// // a rule answers .restart(after: login) for "login required"; later:
/// login.restartAll()   // or login.dropAll()
/// ```
/// Thread safety: safe to use from any thread.
public final class RestartGate: Sendable {
    /// What becomes of a held request.
    typealias Release = @Sendable (Result<Void, TernError>) -> Void

    private struct State {
        var held: [(isOver: @Sendable () -> Bool, release: Release)] = []
        /// For a one-shot gate, how it was opened: later arrivals get the same at once.
        var outcome: Result<Void, TernError>?
    }

    private let state = Locked(State())
    /// Whether the first opening is final (a credential refresh), rather than one batch of many.
    let isOneShot: Bool

    /// Creates a gate that holds requests until `restartAll()` or `dropAll(with:)`.
    public convenience init() { self.init(oneShot: false) }

    init(oneShot: Bool) { isOneShot = oneShot }

    /// The number of requests waiting at the gate (cancelled ones leave it).
    public var heldCount: Int { state.withLock { $0.held.lazy.filter { !$0.isOver() }.count } }

    /// Sends every held request again, each as a new attempt with a fresh deadline.
    public func restartAll() { open(.success(())) }

    /// Fails every held request with `error` (`.cancelled(.explicit)` by default).
    public func dropAll(with error: TernError = .cancelled(.explicit)) { open(.failure(error)) }

    /// Holds a request; `release` runs once when the gate opens (at once if a one-shot gate
    /// already has). `isOver` tells a request that ended meanwhile, so the gate forgets it.
    func hold(isOver: @escaping @Sendable () -> Bool, release: @escaping Release) {
        let outcome = state.withLock { state -> Result<Void, TernError>? in
            if let outcome = state.outcome { return outcome }
            state.held.removeAll { $0.isOver() }
            state.held.append((isOver, release))
            return nil
        }
        if let outcome { release(outcome) }
    }

    private func open(_ outcome: Result<Void, TernError>) {
        let held = state.withLock { state -> [Release] in
            if isOneShot {
                guard state.outcome == nil else { return [] }
                state.outcome = outcome
            }
            defer { state.held = [] }
            return state.held.map(\.release)
        }
        for release in held { release(outcome) }
    }
}
