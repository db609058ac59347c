import Foundation

/// Stages 7 and 10 of `Call.swift`: the response side of the hooks — rules after each network
/// response, preprocessors on the result to deliver (and, on the main thread, just before it) —
/// as a value over the hooks of the request, its group and its client, tested on its own
/// (`ResponseHooksStageTests`). A call without response hooks never builds one.
struct ResponseHooksStage<Value: Sendable> {
    let hooks: HookChain

    /// The stage of `hooks`; nil when they have no response hooks.
    init?(_ hooks: HookChain?) {
        guard let hooks, hooks.hasResponseHooks else { return nil }
        self.hooks = hooks
    }

    /// What hooks see of `outcome`, the answer to `request` on attempt `attempt`; nil for a failure.
    func context(
        for outcome: Result<RawResponse, TernError>, request: URLRequest, attempt: Int, tags: Set<String>, requestStarted: UInt64
    ) -> ResponseContext? {
        guard case .success(let raw) = outcome else { return nil }
        return ResponseContext(
            request: request, response: raw.response, body: raw.data, attempt: attempt, tags: tags, requestStarted: requestStarted)
    }

    /// The first decision of the rules that is not `.proceed`; `.proceed` without rules, or for
    /// an answer that did not come from the network.
    func verdict(on outcome: Result<RawResponse, TernError>, context: ResponseContext?) -> ResponseDecision {
        guard let context, case .success(let raw) = outcome, raw.source == .network else { return .proceed }
        for rule in hooks.rules {
            let decision = rule.decide(context)
            if case .proceed = decision { continue }
            return decision
        }
        return .proceed
    }

    /// `result` after the background preprocessors.
    func preprocess(_ result: Result<Response<Value>, TernError>, context: ResponseContext?) -> Result<Response<Value>, TernError> {
        Self.fold(
            result, context: context, through: hooks.preprocessors, named: { $0 },
            success: { try $0.preprocessSuccess($1, of: $2) }, failure: { $0.preprocessFailure($1, of: $2) })
    }

    /// `result` after the main-thread preprocessors; runs on the main actor.
    @MainActor
    static func preprocessOnMain(
        _ result: Result<Response<Value>, TernError>, context: ResponseContext?,
        with preprocessors: [any MainThreadResponsePreprocessor]
    ) -> Result<Response<Value>, TernError> {
        fold(
            result, context: context, through: preprocessors, named: { $0 },
            success: { try $0.preprocessSuccess($1, of: $2) }, failure: { $0.preprocessFailure($1, of: $2) })
    }

    /// Passes `result` through each of `hooks` in turn: a success through `success` (a throw
    /// makes it a failure named after the hook), a failure through `failure`. Runs on the caller's thread.
    private static func fold<Hooked>(
        _ result: Result<Response<Value>, TernError>, context: ResponseContext?, through hooks: [Hooked],
        named hook: (Hooked) -> any Hook,
        success: (Hooked, Value, ResponseContext) throws -> Value,
        failure: (Hooked, TernError, ResponseContext?) -> TernError
    ) -> Result<Response<Value>, TernError> {
        var result = result
        for each in hooks {
            switch result {
            case .success(let response):
                guard let context else { continue }
                do {
                    result = .success(Response(response, value: try success(each, response.value, context)))
                } catch {
                    result = .failure(.fromHook(hook(each), error))
                }
            case .failure(let error):
                result = .failure(failure(each, error, context))
            }
        }
        return result
    }
}
