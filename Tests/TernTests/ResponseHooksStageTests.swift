import Foundation
import Testing

@testable import Tern

/// The response side of the hooks on its own: rules and preprocessors on values, no transport.
@Suite struct ResponseHooksStageTests {
    static let url = URL(string: "http://127.0.0.1:9/account")!

    static func outcome(_ status: Int, source: ResponseSource = .network) -> Result<RawResponse, TernError> {
        .success(RawResponse(head: ResponseHead(url: url, statusCode: status, headerFields: [:]), data: Data("{}".utf8), source: source))
    }

    static func stage(_ configure: (inout Hooks) -> Void) -> ResponseHooksStage<JSON>? {
        var hooks = Hooks()
        configure(&hooks)
        return ResponseHooksStage(HookChain(hooks))
    }

    static func context(_ stage: ResponseHooksStage<JSON>, _ outcome: Result<RawResponse, TernError>) -> ResponseContext? {
        stage.context(for: outcome, request: URLRequest(url: url), attempt: 1, tags: ["t"], requestStarted: 0)
    }

    /// Doubles a JSON number, or refuses anything else.
    struct Doubling: ResponsePreprocessor {
        struct NotANumber: Error {}
        func preprocessSuccess<Value: Sendable>(_ value: Value, of response: ResponseContext) throws -> Value {
            guard let number = (value as? JSON)?.int else { throw NotANumber() }
            return JSON.int(Int64(number * 2)) as? Value ?? value
        }
    }

    @Test func withoutResponseHooksThereIsNoStage() {
        #expect(Self.stage { $0.adapt("sign") { request, _ in request } } == nil)
        #expect(ResponseHooksStage<JSON>(nil) == nil)
    }

    @Test func theFirstRuleThatDecidesWinsAndCachedAnswersAreNotJudged() throws {
        let stage = try #require(
            Self.stage {
                $0.rule("pass") { _ in .proceed }
                $0.rule("expired") {
                    $0.response?.statusCode == 401 ? .fail(.unacceptableStatus(code: 401, body: Data(), headers: [:])) : .proceed
                }
                $0.rule("never") { _ in .succeed }
            })
        let unauthorized = Self.outcome(401)
        guard case .fail(let error) = stage.verdict(on: unauthorized, context: Self.context(stage, unauthorized)) else {
            Issue.record("the second rule did not decide")
            return
        }
        #expect(error.statusCode == 401)
        let ok = Self.outcome(200)
        guard case .succeed = stage.verdict(on: ok, context: Self.context(stage, ok)) else {
            Issue.record("the third rule did not decide")
            return
        }
        let cached = Self.outcome(401, source: .cache)
        guard case .proceed = stage.verdict(on: cached, context: Self.context(stage, cached)) else {
            Issue.record("a cached answer was judged")
            return
        }
        #expect(Self.context(stage, .failure(.timedOut(after: 1))) == nil)
    }

    @Test func preprocessorsRunInOrderAndAThrowNamesTheHook() throws {
        let stage = try #require(
            Self.stage {
                $0.preprocessors.append(Doubling())
                $0.preprocessFailure("first") { error, _ in
                    if case .clientInvalidated = error { .cacheMiss(url: nil) } else { error }
                }
                $0.preprocessFailure("second") { error, _ in
                    if case .cacheMiss = error { .timedOut(after: 2) } else { error }
                }
            })
        let raw = try Self.outcome(200).get()
        let context = Self.context(stage, .success(raw))
        let response = Response<JSON>(
            request: URLRequest(url: Self.url), head: raw.head, data: raw.data, value: .int(21),
            timing: Timing(start: Date(), duration: 0), source: .network, attempt: 1, redirects: [], metrics: nil)
        #expect(try stage.preprocess(.success(response), context: context).get().value.int == 42)
        let refused = stage.preprocess(.success(Response(response, value: JSON.string("x"))), context: context).failure
        guard case .rejected(let name, _) = refused else {
            Issue.record("expected the doubling hook's refusal, got \(String(describing: refused))")
            return
        }
        #expect(name == "Doubling")
        // The first turns the error into a cache miss, which the second then turns into a timeout.
        #expect(stage.preprocess(.failure(.clientInvalidated), context: nil).failure?.isTimeout == true)
    }
}
