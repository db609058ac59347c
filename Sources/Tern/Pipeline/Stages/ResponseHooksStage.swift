import Foundation

/// The response side of the hooks: rules after each network response (stage 6), preprocessors on
/// the result to deliver (stage 7 and, on the main thread, stage 9). Calls without hooks never
/// come here.
extension Call {
    /// What hooks see of a response, when the request has response hooks and a response came.
    func responseContext(for outcome: Result<RawResponse, TernError>, route: RequestCore.Route) -> ResponseContext? {
        guard let hooks, hooks.hasResponseHooks, case .success(let raw) = outcome else { return nil }
        return ResponseContext(
            request: route.request ?? urlRequest, response: raw.response, body: raw.data,
            attempt: route.attempt, tags: core.tags, requestStarted: started.uptime)
    }

    /// What the rules make of a network response; `.proceed` without rules or for a cached one.
    func verdict(on outcome: Result<RawResponse, TernError>, context: ResponseContext?) -> ResponseDecision {
        guard let context, let rules = hooks?.rules, !rules.isEmpty, case .success(let raw) = outcome, raw.source == .network else {
            return .proceed
        }
        return applyRules(rules, to: context)
    }

    /// `result`, saying how many attempts it took when it failed after more than one (redirects
    /// aside).
    func counted(_ result: Result<Response<Value>, TernError>, route: RequestCore.Route) -> Result<Response<Value>, TernError> {
        let attempts = route.attempt - route.redirects.count
        guard case .failure(let error) = result, attempts > 1, !error.isCancelled else { return result }
        return .failure(.failedAfterRetries(attempts: attempts, last: error))
    }

    /// The first decision of `rules` that is not `.proceed`.
    func applyRules(_ rules: [any ResponseRule], to response: ResponseContext) -> ResponseDecision {
        for rule in rules {
            let decision = rule.decide(response)
            if case .proceed = decision { continue }
            return decision
        }
        return .proceed
    }

    /// `result` after the background preprocessors.
    func preprocess(_ result: Result<Response<Value>, TernError>, context: ResponseContext?) -> Result<Response<Value>, TernError> {
        guard let preprocessors = hooks?.preprocessors, !preprocessors.isEmpty else { return result }
        return Self.fold(
            result, context: context, through: preprocessors, named: { $0 },
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
                    result = .success(response.replacingValue(try success(each, response.value, context)))
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

extension Call {
    /// Tells the monitors how the request ended.
    func reportFinished(_ result: Result<Response<Value>, TernError>) {
        guard let monitor else { return }
        let route = core.route
        let response = try? result.get()
        monitor.send(
            .finished(
                RequestOutcome(
                    statusCode: response?.statusCode, error: result.failure, source: response?.source,
                    duration: Double(DispatchTime.now().uptimeNanoseconds - started.uptime) / 1e9,
                    attempts: route.attempt, redirects: route.redirects.count, bytes: response?.data.count ?? 0, body: response?.data)))
    }
}

extension Result {
    /// The error, if this is a failure.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension Response {
    /// The same response with another value (a preprocessor's).
    func replacingValue(_ value: Value) -> Response {
        Response(self, value: value)
    }
}
