import Foundation
import Testing

@testable import Tern

/// `timeout` is an idle timeout — no sign of life for that long fails the attempt — and
/// `deadline` bounds the whole request, retries and waits included; each fails with its own
/// error, on both transports.
@Suite(.serialized) struct TimeoutTests {
    static func client(over transport: TransportKind, _ configure: (inout ClientConfiguration) -> Void = { _ in }) throws -> Client {
        transport.client(try TestServers.fixture(), configure)
    }

    @Test(arguments: TransportKind.all)
    func aSteadyBodyOutlivesTheIdleTimeout(over transport: TransportKind) async throws {
        let client = try Self.client(over: transport) { $0.timeout = 5 }
        // Twelve chunks half a second apart: 6 s in all, never 5 s without one (room for a loaded
        // machine, which has held URLSession's delegate queue up for 3 s).
        let response = try await client.send(Request<String>("drip", query: ["chunks": 12, "interval": 0.5]))
        #expect(response.value == (0..<12).map { String(format: "chunk%03d", $0) }.joined())
    }

    /// Every thread of Swift's pool computes for 5 s while a body arrives every half second. On
    /// Linux URLSession delivers its events on those same threads: the 2 s idle timeout must hear
    /// out the events held up meanwhile instead of reading them as a silent server.
    @Test(arguments: TransportKind.all)
    func aBusyProcessIsNotASilentServer(over transport: TransportKind) async throws {
        let client = try Self.client(over: transport) { $0.timeout = 2 }
        let request = Request<String>("drip", query: ["chunks": 8, "interval": 0.5])
        let result = await withCheckedContinuation { continuation in
            client.send(request) { continuation.resume(returning: $0) }
            for _ in 0..<ProcessInfo.processInfo.activeProcessorCount {
                Task.detached {
                    let end = DispatchTime.now().uptimeNanoseconds + 5_000_000_000
                    while DispatchTime.now().uptimeNanoseconds < end {}
                }
            }
        }
        #expect(result.success?.value == (0..<8).map { String(format: "chunk%03d", $0) }.joined(), "\(result)")
    }

    @Test(arguments: TransportKind.all)
    func silenceAfterTheHeadIsAnIdleTimeout(over transport: TransportKind) async throws {
        let client = try Self.client(over: transport)
        let (result, seconds) = await client.timedResult(Request<Data>("stall-body", query: ["seconds": 5], timeout: 0.5))
        guard case .failure(.timedOut(after: 0.5)) = result else {
            Issue.record("expected .timedOut(after: 0.5), got \(result)")
            return
        }
        #expect(seconds < 4, "the 5 s stall must not be waited out (took \(seconds) s)")
    }

    @Test(arguments: TransportKind.all)
    func aDeadlineBoundsABodyThatKeepsComing(over transport: TransportKind) async throws {
        let client = try Self.client(over: transport) { $0.deadline = 1 }
        let (result, seconds) = await client.timedResult(Request<Data>("drip", query: ["chunks": 40, "interval": 0.1]))
        guard case .failure(let error) = result, case .deadlineExceeded(after: 1) = error else {
            Issue.record("expected .deadlineExceeded(after: 1), got \(result)")
            return
        }
        #expect(error.isTimeout && !error.description.isEmpty)
        #expect(seconds < 3.5, "the 4 s body must not be waited out (took \(seconds) s)")
    }

    @Test(arguments: TransportKind.all)
    func aRequestLiftsItsClientsDeadline(over transport: TransportKind) async throws {
        let client = try Self.client(over: transport) { $0.deadline = 0.3 }
        var request = Request<String>("drip", query: ["chunks": 4, "interval": 0.2])
        request.deadline = .infinity
        #expect(try await client.send(request).value.hasPrefix("chunk000"))
        // The group's deadline stands between them.
        request.deadline = nil
        request.group = APIGroup("slow") { $0.deadline = 5 }
        #expect(try await client.send(request).value.hasPrefix("chunk000"))
    }

    /// The deadline covers the waits between attempts: the request ends within it however many
    /// retries its policy allows, and a wait that would outlast it is not started — the answer
    /// in hand is delivered at once instead of a timeout later.
    @Test(arguments: TransportKind.all)
    func theDeadlineCountsTheWaitsBetweenAttempts(over transport: TransportKind) async throws {
        let client = try Self.client(over: transport) {
            $0.deadline = 1
            $0.retryPolicy = RetryPolicy(maxAttempts: 10, baseDelay: 0.4, maxDelay: 0.4, jitter: 0)
        }
        let flaky = Request<JSON>("flaky", query: ["key": Fixture.uniqueKey("deadline-waits"), "fail": 20, "status": 503])
        let (result, seconds) = await client.timedResult(flaky)
        #expect(result.failure?.statusCode == 503 || result.failure?.isTimeout == true, "\(result)")
        #expect((result.failure?.attempts ?? 1) <= 3)
        #expect(seconds < 1.8, "took \(seconds) s")
        // A Retry-After past the deadline: the 503 and its header at once (a deadline the
        // loaded fixture server answers well within).
        let patient = try Self.client(over: transport) {
            $0.deadline = 8
            $0.retryPolicy = RetryPolicy(maxAttempts: 10, maxDelay: 60)
        }
        let later = Request<JSON>(
            "flaky", query: ["key": Fixture.uniqueKey("deadline-later"), "fail": 20, "status": 503, "retry_after": 30])
        let (answer, waited) = await patient.timedResult(later)
        guard case .failure(.unacceptableStatus(503, _, let headers, _)) = answer else {
            Issue.record("expected the 503 itself, got \(answer)")
            return
        }
        #expect(headers["Retry-After"] == "30" && waited < 8, "waited \(waited) s")
    }

    @Test(arguments: TransportKind.all, [0, -1, .nan] as [TimeInterval])
    func aDeadlineThatIsNoneIsAMistake(over transport: TransportKind, seconds: TimeInterval) async throws {
        let client = try Self.client(over: transport) { $0.deadline = seconds }
        #expect(client.configurationError?.description.contains("deadline must be more than 0 seconds") == true)
        var request = Request<JSON>("json")
        request.deadline = seconds
        let (result, _) = await (try Self.client(over: transport)).completionResult(request)
        guard case .failure(.invalidRequest(.invalidValue(name: "deadline", _))) = result else {
            Issue.record("expected .invalidValue for the deadline, got \(result)")
            return
        }
    }
}
