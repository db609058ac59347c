import Foundation

/// The response side of the hooks: rules after each network response (stage 6), preprocessors on
/// the result to deliver (stage 7 and, on the main thread, stage 9). Calls without hooks never
/// come here.
extension Call {
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
        var result = result
        for preprocessor in preprocessors {
            switch result {
            case .success(let response):
                guard let context else { continue }
                do {
                    result = .success(response.replacingValue(try preprocessor.preprocessSuccess(response.value, of: context)))
                } catch {
                    result = .failure(.fromHook(preprocessor, error))
                }
            case .failure(let error):
                result = .failure(preprocessor.preprocessFailure(error, of: context))
            }
        }
        return result
    }

    /// `result` after the main-thread preprocessors; runs on the main actor.
    @MainActor
    static func preprocessOnMain(_ result: Result<Response<Value>, TernError>, context: ResponseContext?,
                                 with preprocessors: [any MainThreadResponsePreprocessor]) -> Result<Response<Value>, TernError> {
        var result = result
        for preprocessor in preprocessors {
            switch result {
            case .success(let response):
                guard let context else { continue }
                do {
                    result = .success(response.replacingValue(try preprocessor.preprocessSuccess(response.value, of: context)))
                } catch {
                    result = .failure(.fromHook(preprocessor, error))
                }
            case .failure(let error):
                result = .failure(preprocessor.preprocessFailure(error, of: context))
            }
        }
        return result
    }
}

extension Response {
    /// The same response with another value (a preprocessor's).
    func replacingValue(_ value: Value) -> Response {
        Response(request: request, httpResponse: httpResponse, data: data, value: value, timing: timing, source: source,
                 attempt: attempt, redirects: redirects)
    }
}
