import Foundation

/// The configuration `Client.shared` is created with: changeable until the shared client exists,
/// fixed from then on.
/// Thread safety: safe to use from any thread; `configure` runs the caller's closure outside the
/// lock and keeps its result only if the client was not created meanwhile.
final class SharedClientSetup: Sendable {
    private struct State {
        var configuration: ClientConfiguration
        /// Counts the changes, so that a change made from a stale copy is detected.
        var version = 0
        var created = false
    }
    private let state: Locked<State>

    /// The one behind `Client.shared`.
    static let standard = SharedClientSetup()

    init() {
        var configuration = ClientConfiguration()
        configuration.oneLineGetStrategy = .cancelOlder
        state = Locked(State(configuration: configuration))
    }

    /// Applies `configure` to the configuration; false when the client was already created.
    func configure(_ configure: (inout ClientConfiguration) -> Void) -> Bool {
        while true {
            guard let (current, version) = state.withLock({ $0.created ? nil : ($0.configuration, $0.version) }) else { return false }
            var changed = current
            configure(&changed)
            let kept = state.withLock { state -> Bool? in
                if state.created { return nil }
                // Another caller changed it meanwhile: apply this change to theirs.
                guard state.version == version else { return false }
                state.configuration = changed
                state.version += 1
                return true
            }
            switch kept {
            case nil: return false
            case true?: return true
            case false?: continue
            }
        }
    }

    /// The shared client, with the configuration as it is now; later `configure` calls fail.
    func makeClient() -> Client {
        Client(
            configuration: state.withLock { state in
                state.created = true
                return state.configuration
            })
    }
}
