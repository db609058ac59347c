import Foundation
import Testing

@testable import Tern

/// RFC 6455 §4.1's rule on its own: per host and port, one connecting at a time, the rest in the
/// order they came; a waiting socket that leaves is skipped; leaving twice changes nothing.
@Suite struct WebSocketConnectGateTests {
    @Test func socketsToOneHostConnectInTurn() {
        let gate = WebSocketConnectGate()
        let started = Locked([String]())
        let start = { (name: String) in { @Sendable in started.withLock { $0.append(name) } } }
        let a = gate.enter("h:443", start: start("a"))
        let b = gate.enter("h:443", start: start("b"))
        let c = gate.enter("h:443", start: start("c"))
        _ = gate.enter("other:443", start: start("other"))
        #expect(started.withLock { $0 } == ["a", "other"])
        gate.leave(b)  // gave up while waiting
        gate.leave(a)
        gate.leave(a)  // twice: nothing more
        #expect(started.withLock { $0 } == ["a", "other", "c"])
        gate.leave(c)
        _ = gate.enter("h:443", start: start("d"))
        #expect(started.withLock { $0 } == ["a", "other", "c", "d"])
    }

    @Test func theKeyIsTheHostAndPort() {
        #expect(WebSocketConnectGate.key(for: URL(string: "https://Example.com/live")!) == "example.com:443")
        #expect(WebSocketConnectGate.key(for: URL(string: "http://example.com/live")!) == "example.com:80")
        #expect(WebSocketConnectGate.key(for: URL(string: "http://127.0.0.1:8080/live")!) == "127.0.0.1:8080")
    }
}
