import Foundation
import Testing
@testable import Tern

/// The loopback servers `scripts/test.sh` starts; their addresses come from the environment.
enum TestServers {
    struct Missing: Error, CustomStringConvertible {
        let variable: String
        var description: String {
            "\(variable) is not set: run the suite through scripts/test.sh, which starts httpbin and the fixture server"
        }
    }

    /// httpbin served by gunicorn, e.g. `http://127.0.0.1:41234`.
    static func httpbin() throws -> String { try address("TERN_HTTPBIN_URL") }
    /// Tern's fault fixture server (`scripts/fixture_server.py`).
    static func fixture() throws -> String { try address("TERN_FIXTURE_URL") }

    /// The reference WebSocket server (`scripts/websocket_server.py`, the `websockets` package),
    /// e.g. `ws://127.0.0.1:41240`.
    static func webSocket() throws -> String { try address("TERN_WEBSOCKET_URL") }
    /// The same server on a second port, whose permessage-deflate keeps no context either way and
    /// uses the smallest windows (server 9 bits, client 8).
    static func webSocketNoTakeover() throws -> String { try address("TERN_WEBSOCKET_NO_TAKEOVER_URL") }
    /// The hostile WebSocket fixture (`scripts/fixture_websocket.py`): malformed frames, broken
    /// handshakes, stalls.
    static func webSocketFixture() throws -> String { try address("TERN_WEBSOCKET_FIXTURE_URL") }
    /// The same fixture on a port of its own, for tests that stall openings on purpose (a host of
    /// its own to the one-connect-per-host rule, so no other test waits behind them).
    static func webSocketStallFixture() throws -> String { try address("TERN_WEBSOCKET_STALL_URL") }

    /// nginx over TLS with HTTP/2 (ALPN), the TLS fixture's certificate; `/tiny.json`, `/status`.
    static func h2() throws -> String { try address("TERN_H2_URL") }
    /// The loopback forward proxy's port (`scripts/fixture_proxy.py`).
    static func proxyPort() throws -> Int { try #require(Int(try address("TERN_PROXY_PORT"))) }
    /// The loopback SOCKS5 proxy's port (`scripts/fixture_socks.py`): it resolves `*.tern.test`.
    static func socksPort() throws -> Int { try #require(Int(try address("TERN_SOCKS_PORT"))) }
    /// The fixture over TLS 1.2–1.3 (`scripts/fixture_tls.py`), e.g. `https://127.0.0.1:41236`.
    static func tls() throws -> String { try address("TERN_TLS_URL") }
    /// The same, TLS 1.2 at most.
    static func tls12() throws -> String { try address("TERN_TLS12_URL") }
    /// A file the TLS fixture wrote: `ca.pem`, `leaf.pem`, `other-leaf.pem`, `client.pem`, `client.key`.
    static func tlsFile(_ name: String) throws -> URL {
        URL(fileURLWithPath: try address("TERN_TLS_DIR")).appendingPathComponent(name)
    }
    /// A pin from the TLS fixture's `pins.txt` (`leaf` or `other`), computed by Python's `cryptography`.
    static func tlsPin(_ name: String) throws -> PublicKeyPin {
        let text = try String(contentsOf: tlsFile("pins.txt"), encoding: .utf8)
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + "=") }
        return try #require(line.flatMap { PublicKeyPin(String($0.dropFirst(name.count + 1))) })
    }

    private static func address(_ variable: String) throws -> String {
        StallWatch.started
        guard let value = ProcessInfo.processInfo.environment[variable], !value.isEmpty else { throw Missing(variable: variable) }
        return value
    }
}

/// Helpers that turn the closure APIs into awaitable values for tests.
extension Client {
    /// Sends through the completion-closure API on `queue` and returns the result and whether
    /// the callback ran on the main thread.
    func completionResult<Value>(
        _ request: some RequestConvertible<Value>, queue: CallbackQueue = .immediate
    ) async -> (Result<Response<Value>, TernError>, onMain: Bool) {
        await withCheckedContinuation { continuation in
            send(request, queue: queue) { result in
                continuation.resume(returning: (result, Thread.isMainThread))
            }
        }
    }

    /// Sends on `.immediate` and returns the result with the seconds from send to callback, timed
    /// in the callback itself: the awaiting test may resume late on a loaded machine (a shared
    /// 2-core box running the suite under ThreadSanitizer), the callback does not.
    func timedResult<Value>(_ request: some RequestConvertible<Value>) async -> (Result<Response<Value>, TernError>, seconds: Double) {
        let started = Date()
        return await withCheckedContinuation { continuation in
            send(request, queue: .immediate) { result in
                continuation.resume(returning: (result, Date().timeIntervalSince(started)))
            }
        }
    }

    /// Sends through the success/failure API and folds the two closures into a `Result`.
    func pairResult<Value>(_ request: some RequestConvertible<Value>) async -> Result<Value, TernError> {
        await withCheckedContinuation { continuation in
            send(
                request, queue: .immediate, success: { continuation.resume(returning: .success($0)) },
                failure: { continuation.resume(returning: .failure($0)) })
        }
    }

    /// Sends through the delegate API and returns what the delegate received.
    func delegateResult<Value>(_ request: some RequestConvertible<Value>) async -> Result<Response<any Sendable>, TernError> {
        let recorder = RecordingDelegate()
        return await withCheckedContinuation { continuation in
            recorder.onResult = { continuation.resume(returning: $0) }
            send(request, delegate: recorder, queue: .immediate)
        }
    }
}

/// A delegate that reports its single result through a closure and counts calls.
// Sendable: `onResult` is set before the request starts and then only read by Tern's one callback.
final class RecordingDelegate: RequestDelegate, @unchecked Sendable {
    var onResult: (@Sendable (Result<Response<any Sendable>, TernError>) -> Void)?
    func request(_ request: RequestHandle, didSucceedWith response: Response<any Sendable>) { onResult?(.success(response)) }
    func request(_ request: RequestHandle, didFailWith error: TernError) { onResult?(.failure(error)) }
}

extension Result {
    var success: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}

/// Counts things across threads in tests.
final class Counter: Sendable {
    private let value = Locked(0)
    @discardableResult func increment() -> Int {
        value.withLock {
            $0 += 1; return $0
        }
    }
    var count: Int { value.withLock { $0 } }
}

/// The fixture server's `/pattern` body: byte i is (i * 31 + 7) % 251. Built with a raw loop,
/// because a `map` over millions of elements is slow in debug builds under ThreadSanitizer, and a
/// test that computes for seconds starves the other tests of concurrency threads.
enum TestPattern {
    static func bytes(_ count: Int) -> Data {
        var data = Data(count: count)
        data.withUnsafeMutableBytes { buffer in
            let bytes = buffer.bindMemory(to: UInt8.self)
            var value = 7
            for index in 0..<count {
                bytes[index] = UInt8(value)
                value += 31
                if value >= 251 { value -= 251 }
            }
        }
        return data
    }
}

/// `Task.sleep(for:)` needs macOS 13 / iOS 16; the tests build at the package's targets (macOS 10.15, iOS 13).
extension Task where Success == Never, Failure == Never {
    static func sleep(milliseconds: UInt64) async throws {
        try await sleep(nanoseconds: milliseconds * 1_000_000)
    }
}

/// The transports a behaviour suite runs against: URLSession everywhere, and Tern's libcurl
/// transport on Linux. Parameterise a test with `TransportKind.all` and build its client with
/// `kind.configure(&configuration)` last (the libcurl transport takes the configuration's wire
/// headers and connection limit).
enum TransportKind: String, Sendable, CaseIterable, CustomTestStringConvertible {
    case urlSession, curl

    /// The kinds this platform has.
    static var all: [TransportKind] {
        #if os(Linux)
        [.urlSession, .curl]
        #else
        [.urlSession]
        #endif
    }

    var testDescription: String { rawValue }

    /// A client of `baseURL` on this transport: callbacks `.immediate`, a 10 s idle timeout (30 s
    /// under ThreadSanitizer, where URLSession answers in the parallel pass once all waited more
    /// than 10 s at the same moment), then `configure`.
    func client(_ baseURL: String, _ configure: (inout ClientConfiguration) -> Void = { _ in }) -> Client {
        Client(baseURL: baseURL) {
            $0.callbackQueue = .immediate
            $0.timeout = LimitTests.isUnderThreadSanitizer ? 30 : 10
            configure(&$0)
            self.configure(&$0)
        }
    }

    /// Puts this kind's transport in `configuration`, whatever the default is.
    func configure(_ configuration: inout ClientConfiguration) {
        #if os(Linux)
        if self == .curl { return configuration.transport = CurlTransport.make(configuration: configuration) }
        #endif
        configuration.transport = URLSessionTransport.make(configuration: configuration)
    }
}
