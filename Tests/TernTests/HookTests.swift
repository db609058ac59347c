import Foundation
import Testing
@testable import Tern

/// Hooks at client, group and request level: their order and threads, parameter and URL
/// rewriting seen by httpbin and by every later stage, signatures, async adapters, preprocessors.
@Suite struct HookTests {
    /// Calls in the order they happened, with whether each ran on the main queue.
    final class Journal: Sendable {
        private let entries = Locked<[(String, Bool)]>([])
        func note(_ name: String) { entries.withLock { $0.append((name, MainQueue.isCurrent)) } }
        var names: [String] { entries.withLock { $0.map(\.0) } }
        func onMain(_ name: String) -> Bool? { entries.withLock { $0.first { $0.0 == name }?.1 } }
    }

    struct Recording: ParameterRewriter, URLRewriter, RequestAdapter, ResponseRule, ResponsePreprocessor {
        let level: String
        let journal: Journal
        func rewrite(_ parameters: inout RequestParameters) throws { journal.note("\(level).parameters") }
        func rewrite(_ url: URL) throws -> URL { journal.note("\(level).url"); return url }
        func adapt(_ request: URLRequest, for attempt: AttemptInfo) async throws -> URLRequest {
            journal.note("\(level).adapt")
            return request
        }
        func decide(_ response: ResponseContext) -> ResponseDecision { journal.note("\(level).rule"); return .proceed }
        func preprocessSuccess<Value: Sendable>(_ value: Value, of response: ResponseContext) throws -> Value {
            journal.note("\(level).success")
            return value
        }
    }

    struct MainRecording: MainThreadResponsePreprocessor {
        let level: String
        let journal: Journal
        @MainActor func preprocessSuccess<Value: Sendable>(_ value: Value, of response: ResponseContext) throws -> Value {
            journal.note("\(level).main")
            return value
        }
    }

    private func hooks(_ level: String, _ journal: Journal) -> Hooks {
        var hooks = Hooks()
        let recording = Recording(level: level, journal: journal)
        hooks.parameterRewriters.append(recording)
        hooks.urlRewriters.append(recording)
        hooks.adapters.append(recording)
        hooks.rules.append(recording)
        hooks.preprocessors.append(recording)
        hooks.mainThreadPreprocessors.append(MainRecording(level: level, journal: journal))
        return hooks
    }

    @Test func hooksRunInTheDocumentedOrderOnTheDocumentedThreads() async throws {
        let journal = Journal()
        let client = Client(baseURL: try TestServers.httpbin()) {
            $0.callbackQueue = .immediate; $0.hooks = hooks("client", journal)
        }
        let group = APIGroup("bin") { $0.hooks = hooks("group", journal) }
        var request = Request<JSON>("get")
        request.group = group
        request.hooks = hooks("request", journal)
        _ = try await client.send(request)
        let out = ["parameters", "url", "adapt"].flatMap { stage in ["request", "group", "client"].map { "\($0).\(stage)" } }
        let back = ["rule", "success", "main"].flatMap { stage in ["client", "group", "request"].map { "\($0).\(stage)" } }
        #expect(journal.names == out + back)
        #expect(journal.onMain("client.main") == true)
        #expect(journal.onMain("client.rule") == false)
        #expect(journal.onMain("client.success") == false)
    }

    @Test func rewrittenParametersReachTheServerAndEveryLaterStage() async throws {
        let user = Locked("u1")
        let client = Client(baseURL: try TestServers.httpbin()) {
            $0.callbackQueue = .immediate
            $0.hooks.rewriteParameters { parameters in
                parameters.query["device_id"] = "D-42"
                if parameters.body != nil { parameters.body?["user_id"] = user.withLock { $0 } }
            }
        }
        let posted = try await client.send(Request<JSON>("post", method: .post, body: .form(["a": "1"]))).value
        #expect(posted["args"]?["device_id"]?.string == "D-42")
        #expect(posted["form"]?["user_id"]?.string == "u1")
        #expect(posted["form"]?["a"]?.string == "1")
        // The registry and cancel(url:) see the rewritten URL.
        let handle = client.send(Request<JSON>("delay/5")) { _ in }
        #expect(handle.url?.query == "device_id=D-42")
        #expect(client.runningRequests.first?.url?.query == "device_id=D-42")
        #expect(client.cancel(url: "delay/5") == 0)
        #expect(client.cancel(url: "delay/5?device_id=D-42") == 1)
    }

    @Test func theCacheKeyIncludesWhatHooksAdded() async throws {
        let user = Locked("u1")
        let key = Fixture.uniqueKey("hook-cache")
        let client = Client(baseURL: try TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.cacheStorage.directory = FileManager.default.temporaryDirectory.appendingPathComponent(key)
            $0.cachePolicy = CachePolicy(read: .cacheElseNetwork, write: .memory, maxAge: 60)
            $0.hooks.rewriteParameters { $0.query["user"] = user.withLock { $0 } }
        }
        let request = Request<JSON>("cached", query: ["key": key])
        _ = try await client.send(request)
        #expect(try await client.send(request).source == .cache)
        user.withLock { $0 = "u2" }  // another user: another key, so the network again
        #expect(try await client.send(request).source == .network)
        #expect(try await Fixture.count(key) == 2)
    }

    @Test func aURLRewriterMovesTheRequestBeforeAnythingSeesIt() async throws {
        let bin = try #require(URL(string: try TestServers.httpbin()))
        let client = Client(baseURL: "http://placeholder.invalid") {
            $0.callbackQueue = .immediate
            $0.hooks.rewriteURL { url in
                var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
                components.host = bin.host
                components.port = bin.port
                components.path = "/anything/v2" + components.path
                return components.url!
            }
        }
        let response = try await client.send(Request<JSON>("users", query: ["q": "1"]))
        #expect(response.value["url"]?.string?.hasSuffix("/anything/v2/users?q=1") == true)
        #expect(response.request.url?.path == "/anything/v2/users")
        let broken = Client(baseURL: "http://h.invalid") { $0.hooks.rewriteURL { _ in URL(string: "ftp://x/y")! } }
        let error = await #expect(throws: TernError.self) { try await broken.send(Request<Data>("a")) }
        #expect(error?.description.contains("ftp") == true)
    }

    @Test func aSignatureHookSignsTheFinalSortedParameters() async throws {
        let group = APIGroup("signed") { $0.hooks.rewriteParameters { $0.query["app"] = "weather" } }
        let client = Client(baseURL: try TestServers.httpbin()) {
            $0.callbackQueue = .immediate
            $0.hooks.rewriteParameters("sign") { parameters in
                parameters.query["sign"] = Self.checksum(try ParameterEncoding.default.encode(parameters.all))
            }
        }
        var request = Request<JSON>("anything", method: .post, query: ["q": "北京"], body: .form(["z": 1]))
        request.group = group
        request.hooks.rewriteParameters { $0.query["ts"] = 1700000000 }
        let echoed = try await client.send(request).value
        let expected = Self.checksum("app=weather&q=%E5%8C%97%E4%BA%AC&ts=1700000000&z=1")
        #expect(echoed["args"]?["sign"]?.string == expected)
    }

    /// A stand-in for an HMAC: stable and sensitive to every byte and their order.
    static func checksum(_ text: String) -> String {
        String(text.utf8.reduce(UInt64(14695981039346656037)) { ($0 ^ UInt64($1)) &* 1099511628211 }, radix: 16)
    }

    struct Denied: Error, Equatable { let reason: String }

    @Test func anAsyncAdapterChangesEachAttemptOrFailsWithItsOwnError() async throws {
        let attempts = Locked<[Int]>([])
        let client = Client(baseURL: try TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.retryPolicy = .exponential(maxAttempts: 3, baseDelay: 0.01)
            $0.hooks.adapt("stamp") { request, attempt in
                try await Task.sleep(nanoseconds: 5_000_000)
                attempts.withLock { $0.append(attempt.number) }
                var request = request
                request.setValue("attempt-\(attempt.number)", forHTTPHeaderField: "X-Stamp")
                return request
            }
        }
        let key = Fixture.uniqueKey("adapt")
        let response = try await client.send(Request<JSON>("flaky", query: ["key": key, "fail": 1]))
        #expect(response.attempt == 2)
        #expect(attempts.withLock { $0 } == [1, 2])
        let echoed = try await client.send(Request<JSON>("echo")).value
        #expect(echoed["headers"]?["X-Stamp"]?.string == "attempt-1")

        let refusing = Client(baseURL: try TestServers.fixture()) {
            $0.hooks.adapt("gatekeeper") { _, _ in throw Denied(reason: "no session") }
        }
        let error = await #expect(throws: TernError.self) { try await refusing.send(Request<JSON>("echo")) }
        guard case .rejected(let hook, let underlying)? = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(hook == "gatekeeper")
        #expect(underlying as? Denied == Denied(reason: "no session"))
    }

    struct Uppercasing: ResponsePreprocessor {
        func preprocessSuccess<Value: Sendable>(_ value: Value, of response: ResponseContext) throws -> Value {
            guard let json = value as? JSON, let city = json["data"]?["city"]?.string else { return value }
            if city == "Nowhere" { throw Denied(reason: "unknown city") }
            return (JSON.string(city.uppercased()) as? Value) ?? value
        }
        func preprocessFailure(_ error: TernError, of response: ResponseContext?) -> TernError {
            error.statusCode == 404 ? .business(code: 404, message: "not here", body: Data()) : error
        }
    }

    @Test func preprocessorsReplaceTheValueOrTheError() async throws {
        let client = Client(baseURL: try TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.hooks.preprocessors.append(Uppercasing())
        }
        #expect(try await client.send(Request<JSON>("envelope")).value == .string("BEIJING"))
        let missing = await #expect(throws: TernError.self) { try await client.send(Request<JSON>("no-such-thing")) }
        #expect(missing?.businessError?.message == "not here")
    }

    struct Closed: ResponsePreprocessor {
        var name: String { "closed-for-today" }
        func preprocessSuccess<Value: Sendable>(_ value: Value, of response: ResponseContext) throws -> Value {
            throw Denied(reason: "closed")
        }
    }

    /// A preprocessor that throws turns the success into a failure carrying its error (the
    /// unmodified value is never delivered), and the preprocessors after it see that failure.
    @Test func aThrowingPreprocessorFailsTheRequestWithItsError() async throws {
        let client = Client(baseURL: try TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.hooks.preprocessors.append(Closed())
            $0.hooks.preprocessors.append(Uppercasing())
        }
        let error = await #expect(throws: TernError.self) { try await client.send(Request<JSON>("envelope")) }
        guard case .rejected(let hook, let underlying)? = error else { Issue.record("got \(String(describing: error))"); return }
        #expect(hook == "closed-for-today")
        #expect(underlying as? Denied == Denied(reason: "closed"))
    }
}
