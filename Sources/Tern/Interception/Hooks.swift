import Foundation

/// The hooks of one level — a client (the API team), an `APIGroup`, or one request — grouped by
/// the stage they run at.
///
/// **Order.** On the way out each stage runs the request's hooks first (an endpoint definition's,
/// then any the caller added), then the group's, then the client's, so a team-wide hook sees what
/// the endpoint set (a signature over the final parameters belongs on the client, last). On the
/// way back it is the other way round: the client's first, then the group's, then the request's.
/// Within one level hooks run in the order they were added. The stages:
/// 1. `parameterRewriters` — once, before the URL is built: query and body parameters;
/// 2. `urlRewriters` — once, on the built URL (query included);
///    everything after sees the rewritten request: the cache key, the registry, `cancel(url:)`,
///    repeat strategies;
/// 3. `adapters` — before every attempt (not for a followed redirect), asynchronously;
/// 4. `rules` — after every network response, before validation and decoding: proceed, fail
///    (a business error), or stop and restart later;
/// 5. `preprocessors` — once, on the result about to be delivered, off the main thread;
/// 6. `mainThreadPreprocessors` — then on the main thread, just before the callback.
///
/// A request with no hooks at any level takes none of these steps: no `Task`, no extra hop.
/// Thread safety: a value type, safe to share; hooks are `Sendable` and may run on any thread
/// (main-thread preprocessors on the main thread).
public struct Hooks: Sendable {
    /// Rewrite query and body parameters (add a device ID, sign them).
    public var parameterRewriters: [any ParameterRewriter]
    /// Rewrite the URL.
    public var urlRewriters: [any URLRewriter]
    /// Adapt each attempt's `URLRequest`, asynchronously; may fail with their own error.
    public var adapters: [any RequestAdapter]
    /// Decide after each response: proceed, fail, or stop and restart later.
    public var rules: [any ResponseRule]
    /// Preprocess the delivered result off the main thread.
    public var preprocessors: [any ResponsePreprocessor]
    /// Preprocess the delivered result on the main thread, after `preprocessors`.
    public var mainThreadPreprocessors: [any MainThreadResponsePreprocessor]

    /// No hooks.
    public init() {
        parameterRewriters = []
        urlRewriters = []
        adapters = []
        rules = []
        preprocessors = []
        mainThreadPreprocessors = []
    }

    /// Whether there is no hook at all.
    public var isEmpty: Bool {
        parameterRewriters.isEmpty && urlRewriters.isEmpty && adapters.isEmpty && rules.isEmpty
            && preprocessors.isEmpty && mainThreadPreprocessors.isEmpty
    }

    /// Adds a parameter rewriter made of a closure.
    /// - Parameters:
    ///   - name: Names the hook in `TernError.rejected(by:error:)` when the closure throws.
    ///   - rewrite: Changes the parameters in place; throw to fail the request before it is sent.
    public mutating func rewriteParameters(
        _ name: String = "parameters",
        _ rewrite: @escaping @Sendable (inout RequestParameters) throws -> Void
    ) {
        parameterRewriters.append(ClosureHook(name: name, body: rewrite))
    }

    /// Adds a URL rewriter made of a closure.
    /// - Parameters:
    ///   - name: Names the hook in `TernError.rejected(by:error:)` when the closure throws.
    ///   - rewrite: Returns the URL to use instead; throw to fail the request before it is sent.
    public mutating func rewriteURL(_ name: String = "url", _ rewrite: @escaping @Sendable (URL) throws -> URL) {
        urlRewriters.append(ClosureHook(name: name, body: rewrite))
    }

    /// Adds an adapter made of an async closure.
    /// - Parameters:
    ///   - name: Names the hook in `TernError.rejected(by:error:)` when the closure throws.
    ///   - adapt: Returns the request to send for this attempt; throw to fail the request.
    public mutating func adapt(
        _ name: String = "adapter",
        _ adapt: @escaping @Sendable (URLRequest, AttemptInfo) async throws -> URLRequest
    ) {
        adapters.append(ClosureHook(name: name, body: adapt))
    }

    /// Adds a response rule made of a closure.
    /// - Parameters:
    ///   - name: Names the rule in logs and errors.
    ///   - decide: Returns what to do with a response.
    public mutating func rule(_ name: String = "rule", _ decide: @escaping @Sendable (ResponseContext) -> ResponseDecision) {
        rules.append(ClosureHook(name: name, body: decide))
    }

    /// Adds a failure preprocessor made of a closure, run off the main thread: it may replace the error.
    public mutating func preprocessFailure(
        _ name: String = "failure",
        _ replace: @escaping @Sendable (TernError, ResponseContext?) -> TernError
    ) {
        preprocessors.append(FailureClosure(name: name, replace: replace))
    }

    /// Adds a failure preprocessor made of a closure, run on the main thread just before the
    /// request's callback: it may replace the error, and update UI-bound state.
    public mutating func preprocessFailureOnMainThread(
        _ name: String = "failure", _ replace: @escaping @MainActor @Sendable (TernError, ResponseContext?) -> TernError
    ) {
        mainThreadPreprocessors.append(MainThreadFailureClosure(name: name, replace: replace))
    }
}

/// The hooks of every level of one request, resolved once in the order they run on the way out
/// (request, group, client); the way back walks the same lists backwards.
struct HookChain: Sendable {
    let parameterRewriters: [any ParameterRewriter]
    let urlRewriters: [any URLRewriter]
    let adapters: [any RequestAdapter]
    let rules: [any ResponseRule]
    let preprocessors: [any ResponsePreprocessor]
    let mainThreadPreprocessors: [any MainThreadResponsePreprocessor]

    /// The chain of `levels`, innermost (the request) first; nil when no level has a hook.
    init?(_ levels: Hooks?...) {
        let levels = levels.compactMap { $0 }.filter { !$0.isEmpty }
        guard !levels.isEmpty else { return nil }
        parameterRewriters = levels.flatMap(\.parameterRewriters)
        urlRewriters = levels.flatMap(\.urlRewriters)
        adapters = levels.flatMap(\.adapters)
        // The way back: the client's first, then the group's, then the request's.
        rules = levels.reversed().flatMap(\.rules)
        preprocessors = levels.reversed().flatMap(\.preprocessors)
        mainThreadPreprocessors = levels.reversed().flatMap(\.mainThreadPreprocessors)
    }

    /// The chain of a request under its settings and client; nil (at no cost) when no level has a hook.
    init?<Value>(request: Request<Value>, settings: RequestSettings, client: Client) {
        let group = settings.hooks
        guard request.storedHooks != nil || !(group?.isEmpty ?? true) || client.configuration.storedHooks != nil else { return nil }
        self.init(request.storedHooks, group, client.configuration.storedHooks)
    }

    /// Whether anything runs after the response arrives (rules or preprocessors): such a call
    /// processes off the transport's thread.
    var hasResponseHooks: Bool { !rules.isEmpty || !preprocessors.isEmpty || !mainThreadPreprocessors.isEmpty }
}
