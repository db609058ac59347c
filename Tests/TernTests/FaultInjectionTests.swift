import Foundation
import Testing
@testable import Tern

/// Every fault of the fixture server, in every callback style (closure, success/failure,
/// delegate, async) and over every transport (URLSession, and libcurl on Linux): each ends in its
/// documented typed error — or a correct result — within its timeout, exactly once, with no crash
/// or hang, and leaves nothing running.
@Suite(.serialized) struct FaultInjectionTests {
    /// A fault: the request that meets it and what its one outcome must be.
    struct Fault: Sendable, CustomTestStringConvertible {
        let name: String
        let request: @Sendable () throws -> Request<JSON>
        let configure: @Sendable (inout ClientConfiguration) -> Void
        let expect: @Sendable (Result<JSON, TernError>) -> Bool
        var testDescription: String { name }

        init(
            _ name: String, configure: @escaping @Sendable (inout ClientConfiguration) -> Void = { _ in },
            _ request: @escaping @Sendable () throws -> Request<JSON>, expect: @escaping @Sendable (Result<JSON, TernError>) -> Bool
        ) {
            self.name = name
            self.request = request
            self.configure = configure
            self.expect = expect
        }
    }

    /// The idle timeout of a fault that must end with another error: room for URLSession under
    /// ThreadSanitizer while the other cases load the machine (all 30 run at once; 3 s, and once
    /// 10 s, were crossed there before the fault's own error came). A hang still shows: it ends
    /// as a timeout, which these faults do not expect.
    static let roomy: TimeInterval = 30

    static func fixture(
        _ path: String, _ query: Parameters = [:], timeout: TimeInterval = roomy, deadline: TimeInterval? = nil
    ) throws
        -> Request<JSON>
    {
        var request = Request<JSON>(try TestServers.fixture() + "/" + path, query: query, timeout: timeout)
        request.deadline = deadline
        return request
    }

    static func isTransport(_ result: Result<JSON, TernError>) -> Bool {
        if case .failure(.transport) = result { return true }
        return false
    }

    static let faults: [Fault] = [
        Fault("accepts and never answers", { try fixture("stall", ["seconds": 10], timeout: 1) }) { $0.failure?.isTimeout == true },
        Fault("stalls after headers", { try fixture("stall-body", ["seconds": 10], timeout: 1) }) { $0.failure?.isTimeout == true },
        Fault("slow drip against the deadline", { try fixture("drip", ["chunks": 20, "interval": 0.2], deadline: 1) }) {
            if case .failure(.deadlineExceeded(after: 1)) = $0 { return true }
            return false
        },
        Fault("resets mid-body", { try fixture("reset-body") }) { isTransport($0) },
        Fault("fewer bytes than Content-Length", { try fixture("truncated") }) { isTransport($0) },
        Fault("malformed chunked encoding", { try fixture("bad-chunked") }) { result in
            // libcurl refuses the encoding; either way it is never a success.
            if case .failure(.transport) = result { return true }
            if case .failure(.decoding) = result { return true }
            return false
        },
        Fault("invalid JSON", { try fixture("malformed-json") }) { result in
            if case .failure(.decoding(_, let body)) = result { return !body.isEmpty }
            return false
        },
        Fault("the wrong content type", { try fixture("wrong-type") }) { result in
            if case .failure(.unacceptableContentType("text/html", let body)) = result { return !body.isEmpty }
            return false
        },
        Fault("1 MB of headers", { try fixture("huge-headers") }) { result in
            // Either libcurl refuses headers that large, or they arrive whole: never a hang.
            (try? result.get()) == .object([:]) || isTransport(result)
        },
        Fault(
            "2 GB Content-Length with a limit", configure: { $0.maximumResponseSize = 1 << 20 },
            { try fixture("huge", ["announce": 2_147_483_648], timeout: 10) }
        ) { result in
            if case .failure(.responseTooLarge(1 << 20)) = result { return true }
            return false
        },
        // A hang (URLSession's on Linux, unanswered) ends as a timeout, not the 401 expected.
        Fault("401 Basic without credentials", { try fixture("basic-401") }) { result in
            result.failure?.statusCode == 401 && result.failure?.responseBody?.isEmpty == false
        },
        Fault("a redirect loop", { try fixture("redirect-loop", ["key": Fixture.uniqueKey("fault-loop")]) }) { result in
            if case .failure(.redirectFailed(.tooMany)) = result { return true }
            return false
        },
        Fault(
            "a cross-origin redirect carrying Authorization",
            {
                // 127.0.0.1 → localhost is another origin: the credential must not follow.
                let fixture = try TestServers.fixture()
                let other = fixture.replacingOccurrences(of: "127.0.0.1", with: "localhost") + "/echo"
                var request = Request<JSON>(
                    fixture + "/redirect", query: ["to": other], headers: ["Authorization": "Bearer secret"], timeout: roomy)
                request.validation = .default
                return request
            }
        ) { result in
            guard let echoed = try? result.get() else { return false }
            return echoed["path"]?.string == "/echo" && echoed["headers"]?["Authorization"] == nil
        },
        Fault("a connection refused", { Request<JSON>("http://127.0.0.1:9/refused", timeout: roomy) }) { isTransport($0) },
        Fault("DNS failure for a .invalid name", { Request<JSON>("http://tern-fault.invalid/x", timeout: roomy) }) { isTransport($0) },
    ]

    static func viaAsync(_ client: Client, _ request: Request<JSON>) async -> Result<JSON, TernError> {
        do {
            return .success(try await client.send(request).value)
        } catch {
            return .failure(error)
        }
    }

    @Test(arguments: faults, TransportKind.all)
    func eachFaultEndsOnceWithItsTypedErrorInEveryStyle(_ fault: Fault, over transport: TransportKind) async throws {
        let client = Client(baseURL: nil) {
            $0.callbackQueue = .immediate
            fault.configure(&$0)
            transport.configure(&$0)
        }
        let request = try fault.request()
        let started = Date()
        async let viaClosure = client.completionResult(request).0.map(\.value)
        async let viaPair = client.pairResult(request)
        async let viaDelegate = client.delegateResult(request).map { $0.value as? JSON ?? .null }
        async let viaAsync = Self.viaAsync(client, request)
        let results = await [("closure", viaClosure), ("success/failure", viaPair), ("delegate", viaDelegate), ("async", viaAsync)]
        // No hang: each request ends by its own idle timeout at the latest. (The typed errors say
        // which clock fired; how soon the awaiting test resumes depends on the machine's load.)
        let limit = (request.timeout ?? Self.roomy) + 30
        #expect(Date().timeIntervalSince(started) < limit, "\(fault.name) took too long")
        for (style, result) in results {
            #expect(fault.expect(result), "\(fault.name), \(style), \(transport): \(result)")
        }
        try await Task.sleep(milliseconds: 50)
        #expect(client.runningRequests.isEmpty)
    }
}
