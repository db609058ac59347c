import Foundation
import Testing
@testable import Tern

/// Event monitors, the logger, redaction and cURL rendering, against the fixture server and httpbin.
@Suite struct MonitoringTests {
    /// Keeps every event it receives.
    final class Recorder: EventMonitor {
        let queue = DispatchQueue(label: "recorder")
        private let events = Locked<[RequestEvent]>([])
        func receive(_ event: RequestEvent) { events.withLock { $0.append(event) } }
        var all: [RequestEvent] { queue.sync {}; return events.withLock { $0 } }

        /// The kinds of one request's events as short names.
        func names(of id: UInt64) -> [String] {
            all.filter { $0.requestID == id }.map { event in
                switch event.kind {
                case .created: "created"
                case .attemptStarted(let n, _): "attempt \(n)"
                case .redirected: "redirected"
                case .responseReceived(_, let response, _): "response \(response.statusCode)"
                case .attemptFailed: "attempt failed"
                case .retrying: "retrying"
                case .held: "held"
                case .cacheHit: "cache hit"
                case .cacheMiss: "cache miss"
                case .cacheStored: "cache stored"
                case .progress: "progress"
                case .cancelled: "cancelled"
                case .finished(let outcome): "finished \(outcome.statusCode ?? 0) after \(outcome.attempts)"
                }
            }.filter { $0 != "progress" }
        }
    }

    /// Collects a logger's lines.
    final class Lines: Sendable {
        private let lines = Locked<[String]>([])
        func add(_ record: RequestLogger.Record) { lines.withLock { $0.append(record.message) } }
        var all: [String] { lines.withLock { $0 } }
        var text: String { all.joined(separator: "\n") }
    }

    private func client(_ monitors: [any EventMonitor], _ configure: (inout ClientConfiguration) -> Void = { _ in }) throws -> Client {
        try Client(baseURL: TestServers.fixture()) {
            $0.callbackQueue = .immediate
            $0.monitors = monitors
            configure(&$0)
        }
    }

    @Test func aMonitorSeesEveryStepInOrder() async throws {
        let recorder = Recorder()
        let client = try client([recorder]) { $0.retryPolicy = .exponential(maxAttempts: 3, baseDelay: 0.01) }
        let plain = try await client.send(Request<JSON>("json", query: ["n": 1]))
        let redirected = try await client.send(Request<JSON>("redirect-chain", query: ["n": 1, "key": Fixture.uniqueKey("m")]))
        let retried = try await client.send(Request<JSON>("flaky", query: ["key": Fixture.uniqueKey("m"), "fail": 1]))
        let ids = recorder.all.reduce(into: [UInt64]()) { ids, event in if !ids.contains(event.requestID) { ids.append(event.requestID) } }
        try #require(ids.count == 3)
        #expect(recorder.names(of: ids[0]) == ["created", "attempt 1", "response 200", "finished 200 after 1"], "\(plain)")
        #expect(
            recorder.names(of: ids[1]) == [
                "created", "attempt 1", "response 302", "redirected", "attempt 2", "response 200",
                "finished 200 after 2",
            ], "\(redirected)")
        #expect(
            recorder.names(of: ids[2]) == [
                "created", "attempt 1", "response 503", "retrying", "attempt 2", "response 200",
                "finished 200 after 2",
            ], "\(retried)")
    }

    @Test func cacheEventsAndCancellationAreReported() async throws {
        let recorder = Recorder()
        let key = Fixture.uniqueKey("monitor-cache")
        let client = try client([recorder]) {
            $0.cachePolicy = CachePolicy(read: .cacheElseNetwork, write: .memory, maxAge: 60)
            $0.cacheStorage.directory = FileManager.default.temporaryDirectory.appendingPathComponent(key)
        }
        let request = Request<JSON>("cached", query: ["key": key])
        _ = try await client.send(request)
        _ = try await client.send(request)
        let stalled = client.send(Request<JSON>("stall", query: ["seconds": 5], timeout: 10).caching(.disabled)) { _ in }
        try await Task.sleep(milliseconds: 100)
        stalled.cancel()
        try await Task.sleep(milliseconds: 100)
        let ids = recorder.all.reduce(into: [UInt64]()) { ids, event in if !ids.contains(event.requestID) { ids.append(event.requestID) } }
        try #require(ids.count == 3)
        #expect(
            recorder.names(of: ids[0]) == ["created", "cache miss", "attempt 1", "response 200", "cache stored", "finished 200 after 1"])
        #expect(recorder.names(of: ids[1]) == ["created", "cache hit", "finished 200 after 0"])
        #expect(recorder.names(of: ids[2]) == ["created", "attempt 1", "cancelled", "finished 0 after 1"])
    }

    @Test func theLoggerWritesOneRedactedLinePerRequestAndMoreAtDebug() async throws {
        let info = Lines(), debug = Lines(), errors = Lines()
        let client = Client(baseURL: try TestServers.httpbin()) {
            $0.callbackQueue = .immediate
            $0.headers["Authorization"] = "Bearer secret-bearer"
            $0.monitors = [
                RequestLogger(level: .info, write: info.add), RequestLogger(level: .debug, write: debug.add),
                RequestLogger(level: .error, write: errors.add),
            ]
        }
        _ = try await client.send(Request<JSON>("get", query: ["access_token": "secret-token", "q": "北京"]))
        _ = try? await client.send(Request<JSON>("status/404", query: ["password": "secret-password"]))
        try await Task.sleep(milliseconds: 200)
        for lines in [info, debug, errors] { #expect(!lines.text.contains("secret"), "\(lines.text)") }
        #expect(info.all.count == 2)
        #expect(
            info.all[0].contains("GET http://127.0.0.1:") && info.all[0].contains("access_token=<redacted>")
                && info.all[0].contains("→ 200"))
        #expect(info.all[1].contains("✗ HTTP status 404"))
        #expect(errors.all.count == 1 && errors.text.contains("password=<redacted>"))
        #expect(debug.text.contains("Authorization: <redacted>"))
        #expect(debug.text.contains("← 200"))
    }

    @Test func descriptionsNeverShowSecrets() async throws {
        let client = Client(baseURL: try TestServers.fixture()) {
            $0.callbackQueue = .immediate; $0.redirectPolicy.limit = 0
        }
        let error = await #expect(throws: TernError.self) {
            try await client.send(Request<JSON>("redirect-loop", query: ["key": "k", "token": "secret-1"]))
        }
        let failure = try #require(error)
        #expect(failure.description.contains("token=<redacted>") && !failure.description.contains("secret"))
        #expect(!String(reflecting: failure).contains("secret"))
        let preview = TernError.unacceptableStatus(
            code: 400, body: Data(#"{"access_token": "secret-2", "user": "ann"}"#.utf8), headers: [:])
        #expect(preview.description.contains(#""access_token": "<redacted>""#) && preview.description.contains("ann"))
        var request = Request<JSON>("echo", query: ["sign": "secret-3"])
        request.headers["Cookie"] = "session=secret-4"
        let response = try await client.send(request)
        #expect(!response.description.contains("secret") && !response.debugDescription.contains("secret"), "\(response.debugDescription)")
        #expect(response.debugDescription.contains("Cookie: <redacted>"))
        let handle = client.send(request) { _ in }
        #expect(!handle.description.contains("secret"))
        // Only when asked: the caller turns redaction off on purpose.
        #expect(Redaction.none.url(response.request.url).contains("secret-3"))
    }

    /// Form-style nesting hides nothing: `user[password]`, `password[]` and their percent-encoded
    /// forms are redacted like `password`, in URLs, queries and logged curl commands.
    @Test func nestedAndArrayParameterNamesAreRedactedLikeTheirBaseName() async throws {
        let query = "user%5Bpassword%5D=secret-1&password[]=secret-2&user[name]=ann&token%5B0%5D=secret-3"
        let shown = Redaction.standard.query(query)
        #expect(!shown.contains("secret"), "\(shown)")
        #expect(shown.contains("user[name]=ann") || shown.contains("user%5Bname%5D=ann"), "\(shown)")
        let url = URL(string: "https://api.example.com/login?user[password]=secret-4&city=beijing")
        #expect(!Redaction.standard.url(url).contains("secret") && Redaction.standard.url(url).contains("city=beijing"))
        let client = Client(baseURL: try TestServers.fixture()) { $0.callbackQueue = .immediate }
        let response = try await client.send(Request<JSON>("echo", query: ["user[password]": "secret-5", "city": "x"]))
        #expect(!response.description.contains("secret") && !response.debugDescription.contains("secret"))
    }

    @Test func aRequestRendersAsACurlCommand() async throws {
        let client = Client(baseURL: "https://api.example.com") { $0.headers["Authorization"] = "Bearer secret" }
        let login = Request<JSON>("login", method: .post, query: ["token": "t"], body: .form(["user": "ann", "password": "pw's"]))
        let command = try client.curlCommand(for: login)
        #expect(
            command == """
                curl \\
                  -X POST \\
                  'https://api.example.com/login?token=<redacted>' \\
                  -H 'Authorization: <redacted>' \\
                  -H 'Content-Type: application/x-www-form-urlencoded; charset=utf-8' \\
                  --data-binary 'password=<redacted>&user=ann'
                """)
        let json = try client.curlCommand(
            for: Request<JSON>("token", method: .post, body: .json(["refresh_token": "secret-r", "user": "ann"])))
        #expect(json.contains(#""refresh_token":"<redacted>""#) && json.contains("ann") && !json.contains("secret-r"), "\(json)")
        let revealed = try client.curlCommand(for: login, redaction: .none)
        #expect(revealed.contains("'Authorization: Bearer secret'") && revealed.contains(#"password=pw%27s"#))
    }
}
