import Foundation
import Testing

@testable import Tern

/// A completion's captures are released once it has run: an object that only a request's
/// completion holds (a view controller, say) goes when the callback is done, not when a
/// transport next wakes up.
@Suite struct CaptureReleaseTests {
    final class Tracked: Sendable {
        let released: DispatchSemaphore
        init(_ released: DispatchSemaphore) { self.released = released }
        deinit { released.signal() }
    }

    @Test(arguments: TransportKind.all)
    func whatACompletionCapturedIsReleasedWhenItHasRun(over transport: TransportKind) async throws {
        let client = transport.client(try TestServers.fixture())
        var late: [Double] = []
        for _ in 0..<20 {
            let released = DispatchSemaphore(value: 0)
            let ran = DispatchSemaphore(value: 0)
            do {
                let tracked = Tracked(released)
                client.send(Request<JSON>("json")) { _ in
                    _ = tracked
                    ran.signal()
                }
            }
            let waited: Double? = await onThreadOfItsOwn {
                guard ran.wait(timeout: .now() + 10) == .success else { return nil }
                let start = DispatchTime.now().uptimeNanoseconds
                // Generous for a loaded machine, yet under the 1 s that a capture kept through
                // libcurl's idle wait (or until the next request) took.
                guard released.wait(timeout: .now() + 0.9) == .success else { return .infinity }
                return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            }
            late.append(try #require(waited, "the request did not complete"))
            // Idle in between, as an app's screens are: the loop goes to its long wait.
            try await Task.sleep(milliseconds: 50)
        }
        #expect(late.allSatisfy { $0 < 0.9 }, "seconds from the callback to the release: \(late)")
    }

    #if os(Linux)
    /// An ended libcurl exchange no longer holds its request's event handler, whoever still
    /// holds the exchange (the loop thread, between two turns).
    @Test func anEndedExchangeDropsItsEventHandler() throws {
        let curl = try LibCurl.loaded.get()
        let released = DispatchSemaphore(value: 0)
        let request = TransportRequest(URLRequest(url: try #require(URL(string: "http://127.0.0.1:1/"))))
        let exchange: CurlExchange = {
            let tracked = Tracked(released)
            return CurlExchange(id: 1, request: request, settings: CurlSettings(TransportSettings(), curl: curl)) { _ in _ = tracked }
        }()
        #expect(released.wait(timeout: .now()) == .timedOut)
        exchange.finish(code: 0, curl: curl, error: URLError(.cancelled))
        #expect(released.wait(timeout: .now() + 1) == .success)
        withExtendedLifetime(exchange) {}
    }
    #endif
}
