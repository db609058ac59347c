#if os(Linux)
import Foundation
import Glibc
import Testing

@testable import Tern

/// Connecting takes no thread per socket: sixty `wss` sockets to sixty silent servers, whose TLS
/// handshakes are never answered, wait together with no thread blocked for them, and each ends
/// once with the connect's failure when its timeout comes; one cancelled while connecting ends at
/// once; sockets to one host connect in turn. It runs with the heavy suites, one at a time: it
/// looks at every thread of the process.
@Suite struct WebSocketConnectTests {
    /// A listener on 127.0.0.1 that never accepts: the kernel completes TCP connections into its
    /// backlog, and nothing ever answers them.
    final class SilentListener {
        let descriptor: Int32
        let port: Int

        init() throws {
            let listening = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let size = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listening, $0, size) }
            }
            var named = sockaddr_in()
            var length = size
            _ = withUnsafeMutablePointer(to: &named) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listening, $0, &length) }
            }
            descriptor = listening
            port = Int(UInt16(bigEndian: named.sin_port))
            try #require(bound == 0 && listen(listening, 256) == 0)
        }

        deinit { close(descriptor) }
    }

    /// The process's threads blocked in `poll` or `ppoll` (x86-64 system calls 7 and 271), as a
    /// blocking connect waits; the dispatch and Swift thread pools wait in `epoll_wait` and `futex`.
    static func threadsWaitingInPoll() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let call = (try? String(contentsOfFile: "/proc/self/task/\(task)/syscall", encoding: .utf8))?.split(separator: " ").first
            return call == "7" || call == "271"
        }.count
    }

    @Test func sixtySocketsConnectingToASilentServerHoldNoThreadEach() async throws {
        // Sixty hosts (ports): one connects at a time to each (RFC 6455 §4.1).
        let listeners = try (0..<60).map { _ in try SilentListener() }
        let client = Client()
        let started = Date()
        let sockets = listeners.map { client.webSocket(Request<Data>("https://127.0.0.1:\($0.port)/live", timeout: 4)) }
        try await Task.sleep(nanoseconds: 1_000_000_000)
        #expect(sockets.allSatisfy { $0.ending == nil }, "every socket is still connecting")
        #if arch(x86_64)
        // A blocking connect held a thread in poll per socket here: 60 of them.
        let waiting = Self.threadsWaitingInPoll()
        #expect(waiting < 5, "\(waiting) threads wait in poll")
        #endif
        for socket in sockets {
            let ending = try await WebSocketTests.within(20) { await socket.ended() }
            guard case .failed = ending else {
                Issue.record("ended as \(ending)")
                continue
            }
        }
        // Together, not one after another: well under 60 × 4 s.
        #expect(Date().timeIntervalSince(started) < 20)
    }

    // RFC 6455 §4.1: a second socket to a host whose first is still connecting waits for it to
    // open or fail, and starts then (here each fails at its 2 s timeout: the second at about
    // 4 s); a socket to another host does not wait; a cancelled first lets the next one go.
    @Test func oneSocketToAHostConnectsAtATime() async throws {
        let (host, other) = (try SilentListener(), try SilentListener())
        let client = Client()
        let url = { (listener: SilentListener) in "https://127.0.0.1:\(listener.port)/live" }
        let started = Date()
        // Sockets take their turn in the order they reach the rule, on their own queues: the
        // second is opened once the first has surely reached it.
        let first = client.webSocket(Request<Data>(url(host), timeout: 2))
        try await Task.sleep(nanoseconds: 200_000_000)
        let second = client.webSocket(Request<Data>(url(host), timeout: 2))
        let elsewhere = client.webSocket(Request<Data>(url(other), timeout: 2))
        let ended = try await withThrowingTaskGroup(of: (String, TimeInterval).self) { group in
            for (name, socket) in [("first", first), ("second", second), ("elsewhere", elsewhere)] {
                group.addTask {
                    _ = try await WebSocketTests.within(20) { await socket.ended() }
                    return (name, Date().timeIntervalSince(started))
                }
            }
            return try await group.reduce(into: [String: TimeInterval]()) { $0[$1.0] = $1.1 }
        }
        #expect(ended["first"]! < 3.5 && ended["elsewhere"]! < 3.5, "\(ended)")
        #expect(ended["second"]! > 3.5, "the second waited for the first: \(ended)")

        let cancelled = client.webSocket(Request<Data>(url(host), timeout: 30))
        try await Task.sleep(nanoseconds: 200_000_000)
        let next = client.webSocket(Request<Data>(url(host), timeout: 2))
        let again = Date()
        try await Task.sleep(nanoseconds: 300_000_000)
        cancelled.cancel()
        _ = try await WebSocketTests.within(20) { await next.ended() }
        #expect(Date().timeIntervalSince(again) < 10, "the next started when the first was cancelled")
        // Ended means its connection is freed: nothing of it outlives the test.
        _ = try await WebSocketTests.within(5) { await cancelled.ended() }
    }

    @Test func aSocketCancelledWhileConnectingEndsAtOnce() async throws {
        let listener = try SilentListener()
        let socket = Client(baseURL: "https://127.0.0.1:\(listener.port)").webSocket(Request<Data>("live", timeout: 30))
        try await Task.sleep(nanoseconds: 200_000_000)
        socket.cancel()
        let ending = try await WebSocketTests.within(5) { await socket.ended() }
        guard case .failed(.cancelled) = ending else {
            Issue.record("ended as \(ending)")
            return
        }
    }
}
#endif
