import Foundation
import Testing

@testable import Tern

/// Configuration mistakes are caught where they are made, with a typed error that names them;
/// internationalized host names are sent in their ASCII form.
@Suite struct SettingCheckTests {
    static func client(over transport: TransportKind, _ configure: (inout ClientConfiguration) -> Void) throws -> Client {
        transport.client(try TestServers.fixture(), configure)
    }

    @Test(arguments: TransportKind.all, [0, -1, .nan, -.infinity] as [TimeInterval])
    func aClientTimeoutThatIsNoDeadlineIsAConfigurationError(over transport: TransportKind, seconds: TimeInterval) async throws {
        let client = try Self.client(over: transport) { $0.timeout = seconds }
        let problem = try #require(client.configurationError)
        #expect(problem.description.contains("timeout must be more than 0 seconds"), "\(problem)")
        let (result, _) = await client.completionResult(Request<JSON>("json"))
        guard case .failure(.unsupportedConfiguration(let reason)) = result else {
            Issue.record("expected the configuration error, got \(result)")
            return
        }
        #expect(reason.hasPrefix("timeout"))
    }

    @Test(arguments: TransportKind.all)
    func infinityMeansNoDeadline(over transport: TransportKind) async throws {
        let client = try Self.client(over: transport) { $0.timeout = .infinity }
        #expect(client.configurationError == nil)
        #expect(
            try await client.send(Request<JSON>("counted", query: ["key": Fixture.uniqueKey("infinite"), "seconds": 0.2])).statusCode == 200
        )
    }

    @Test(arguments: TransportKind.all)
    func aNegativeLimitIsAConfigurationError(over transport: TransportKind) throws {
        let limit = try Self.client(over: transport) { $0.maximumResponseSize = -1 }
        #expect(limit.configurationError?.description.contains("maximumResponseSize must be 0 or more bytes") == true)
        let attempt = try Self.client(over: transport) { $0.retryPolicy = RetryPolicy(attemptTimeout: 0) }
        #expect(attempt.configurationError?.description.contains("retryPolicy.attemptTimeout") == true)
    }

    /// A base URL that no request could use is the client's mistake: `configurationError`, as
    /// for its timeouts and limits, and every request fails with it, absolute URLs included.
    @Test(
        arguments: TransportKind.all,
        [
            ("http://127.0.0.1:0/v1", "port"), ("http://127.0.0.1:99999/v1", "port"), ("http:///v1", "cannot be used"),
            ("ftp://127.0.0.1/v1", "cannot be used"), ("not a url", "cannot be used"),
        ])
    func anUnusableBaseURLIsAConfigurationError(over transport: TransportKind, _ example: (base: String, reason: String)) async throws {
        let (base, reason) = example
        let client = transport.client(base)
        let problem = try #require(client.configurationError)
        #expect(problem.description.contains("baseURL \"\(base)\""), "\(problem)")
        #expect(problem.description.contains(reason), "\(problem)")
        for url in ["json", try TestServers.fixture() + "/json"] {
            let (result, _) = await client.completionResult(Request<JSON>(url))
            guard case .failure(.unsupportedConfiguration) = result else {
                Issue.record("\(base) + \(url): expected the configuration error, got \(result)")
                continue
            }
        }
        #expect(transport.client(" ").configurationError == nil)  // blank: no base URL
    }

    @Test(arguments: TransportKind.all)
    func aRequestsOwnMistakeFailsThatRequest(over transport: TransportKind) async throws {
        let client = try Self.client(over: transport) { _ in }
        var zero = Request<JSON>("json")
        zero.timeout = 0
        var negative = Request<JSON>("json")
        negative.maximumResponseSize = -5
        let port = Request<JSON>("http://127.0.0.1:99999/json")
        let portZero = Request<JSON>("http://127.0.0.1:0/json")
        for (request, name) in [(zero, "timeout"), (negative, "maximumResponseSize"), (port, "port"), (portZero, "port")] {
            let (result, _) = await client.completionResult(request)
            guard case .failure(.invalidRequest(.invalidValue(let named, let reason))) = result else {
                Issue.record("\(name): expected .invalidValue, got \(result)")
                continue
            }
            #expect(named == name)
            // A request's nil means its client's limit: the fix it is told is Int.max.
            if name == "maximumResponseSize" { #expect(reason.contains("Int.max for no limit, nil for the client's"), "\(reason)") }
            if name == "timeout" { #expect(reason.contains(".infinity for none"), "\(reason)") }
        }
        #expect(try await client.send(Request<JSON>("json")).statusCode == 200)  // the client itself is fine
    }

    @Test func hostNamesAreConvertedToTheirASCIIForm() {
        #expect(IDNA.asciiHost("例子.测试") == "xn--fsqu00a.xn--0zwm56d")
        #expect(IDNA.asciiHost("例子。测试") == "xn--fsqu00a.xn--0zwm56d")  // an ideographic full stop
        #expect(IDNA.asciiHost("bücher.example") == "xn--bcher-kva.example")
        #expect(IDNA.asciiHost("MÜNCHEN.de") == "xn--mnchen-3ya.de")  // case folded first
        #expect(IDNA.asciiHost("mu\u{0308}nchen.de") == "xn--mnchen-3ya.de")  // NFC: ü written as u + ◌̈
        #expect(IDNA.punycode("他们为什么不说中文") == "ihqwcrb4cv8a8dqg056pqjye")  // RFC 3492's sample (A)
        #expect(IDNA.asciiHost("a..例子") == nil)
        #expect(IDNA.asciiHost("ü" + String(repeating: "a", count: 70)) == nil)  // a label over 63 bytes
    }

    @Test func anInternationalizedURLKeepsItsUserPortPathAndQuery() throws {
        let url = try URLBuilder.makeURL("http://li@例子.测试:8080/天气?城市=北京", baseURL: nil, parameters: [:], encoding: .default)
        #expect(url.host == "xn--fsqu00a.xn--0zwm56d")
        #expect(url.port == 8080 && url.user == "li")
        #expect(url.absoluteString == "http://li@xn--fsqu00a.xn--0zwm56d:8080/%E5%A4%A9%E6%B0%94?%E5%9F%8E%E5%B8%82=%E5%8C%97%E4%BA%AC")
    }
}
