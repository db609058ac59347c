import Foundation
import Tern
import TernChildProcess

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `tern-bench --websocket`: Tern's WebSockets against the `websockets` package's client (Python)
/// on the same echo server; and Tern's WebSockets on a minimal WebSocket echo server against the
/// floor, the same bytes echoed by a plain TCP server on the same loop (`EchoServers`): through
/// Tern's own byte stream (the connection and loop a WebSocket runs on, without the protocol)
/// and by blocking sockets (no event loop at all) — in interleaved rounds; then the
/// memory of an idle open socket, 1,000 open in a child process. Run it with
/// scripts/bench-websocket.sh, which starts the servers.
enum WebSocketBench {
    struct Setup {
        /// The `websockets` echo server's `/echo`.
        let url: String
        /// The minimal WebSocket echo beside the TCP one (the floor's server).
        let minimalURL: String
        /// The TCP echo server's port on 127.0.0.1.
        let tcpPort: Int32
        /// The Python with the `websockets` package, and the client script.
        let python: String
        let client: String
    }

    /// One workload: `sockets` sockets each echo `count` messages of `size` bytes.
    struct Workload {
        let name: String
        let sockets: Int
        let count: Int
        let size: Int

        var bytes: Double { Double(sockets * count * size) }
    }

    static func run(_ setup: Setup, rounds: Int, scale: Double) async throws {
        let workloads = [
            Workload(name: "ws-echo-1k", sockets: 1, count: max(50, Int(4_000 * scale)), size: 1_024),
            Workload(name: "ws-echo-1k-x64", sockets: 64, count: max(5, Int(100 * scale)), size: 1_024),
            Workload(name: "ws-1mib", sockets: 1, count: max(2, Int(48 * scale)), size: 1 << 20),
        ]
        let client = Client()
        print(
            "| workload | metric | Tern | websockets (Python) | Tern, minimal server | TCP, Tern's stream | TCP, blocking "
                + "| Tern / websockets | Tern / Tern's stream |")
        print("|---|---|---|---|---|---|---|---|---|")
        var cpuRows: [String] = []
        for workload in workloads {
            var tern: [Double] = [], python: [Double] = [], minimal: [Double] = [], stream: [Double] = [], floor: [Double] = []
            var minimalCPU: [Double] = [], streamCPU: [Double] = []
            for round in 0..<rounds {
                // Interleaved, the order turning each round, so that drift falls on all five.
                let order = round.isMultiple(of: 2) ? [0, 1, 2, 3, 4] : [4, 3, 2, 1, 0]
                for which in order {
                    switch which {
                    case 0: tern.append(try await echo(client, setup.url, workload).seconds)
                    case 1: python.append(try pythonEcho(setup, workload))
                    case 2:
                        let timing = try await echo(client, setup.minimalURL, workload)
                        minimal.append(timing.seconds)
                        minimalCPU.append(timing.cpu)
                    case 3:
                        let timing = try await streamEcho(port: setup.tcpPort, workload)
                        stream.append(timing.seconds)
                        streamCPU.append(timing.cpu)
                    default: floor.append(try await tcpEcho(port: setup.tcpPort, workload))
                    }
                }
            }
            let (metric, rate): (String, (Double) -> Double) =
                workload.size >= 1 << 20
                ? ("MB/s each way", { workload.bytes / 1_048_576 / $0 })
                : ("round trips/s", { Double(workload.sockets * workload.count) / $0 })
            let (t, p, m) = (rate(tern.median), rate(python.median), rate(minimal.median))
            let (s, f) = (rate(stream.median), rate(floor.median))
            print(
                "| \(workload.name) | \(metric) | \(format(t)) | \(format(p)) | \(format(m)) | \(format(s)) | \(format(f)) | "
                    + String(format: "%.2f | %.2f |", t / p, m / s))
            let messages = Double(workload.sockets * workload.count)
            let (cpuMinimal, cpuStream) = (minimalCPU.median / messages * 1e6, streamCPU.median / messages * 1e6)
            cpuRows.append(
                "| \(workload.name) | \(format(cpuMinimal)) | \(format(cpuStream)) | " + String(format: "%.2f |", cpuStream / cpuMinimal))
            log(
                "\(workload.name) seconds: tern \(tern.map(format)), python \(python.map(format)), "
                    + "minimal \(minimal.map(format)), stream \(stream.map(format)), blocking \(floor.map(format))")
        }
        let oneByOne = try runIdleChild(setup.url, count: 1_000, atOnce: false)
        print("| ws-idle-1000 | KB per open idle socket (opened one after another) | \(oneByOne) | | | | | | |")
        let atOnce = try runIdleChild(setup.url, count: 1_000, atOnce: true)
        print("| ws-idle-1000-at-once | KB per open idle socket (1,000 opened at once) | \(atOnce) | | | | | | |")
        // What this process spent per message: the floor's servers are other processes, so this
        // is Tern's own cost with the server's left out.
        print("\n| workload | Tern's CPU µs per round trip, minimal server | TCP, Tern's stream | stream / WebSocket |")
        print("|---|---|---|---|")
        for row in cpuRows { print(row) }
        try await deflateRows(setup, rounds: rounds, scale: scale, client: client)
    }

    /// 1 KB JSON echoed with permessage-deflate against without, on the `websockets` server (which
    /// agrees to it), interleaved: round trips per second and this process's CPU per round trip.
    static func deflateRows(_ setup: Setup, rounds: Int, scale: Double, client: Client) async throws {
        let workload = Workload(name: "ws-echo-1k-json", sockets: 1, count: max(50, Int(4_000 * scale)), size: 1_024)
        var record = #"{"city": "101010100", "temperature": 3.4, "observed": "14:03:21"}, "#
        record = String(repeating: record, count: 1_024 / record.utf8.count + 1)
        let json = WebSocketMessage.text(String(record.prefix(1_024)))
        var timings: [WebSocketCompression: [(seconds: Double, cpu: Double)]] = [:]
        for round in 0..<rounds {
            let order: [WebSocketCompression] =
                round.isMultiple(of: 2) ? [.disabled, .permessageDeflate] : [.permessageDeflate, .disabled]
            for compression in order {
                timings[compression, default: []].append(
                    try await echo(client, setup.url, workload, message: json, compression: compression))
            }
        }
        print("\n| workload | compression | round trips/s | Tern's CPU µs per round trip |")
        print("|---|---|---|---|")
        for (compression, name) in [(WebSocketCompression.disabled, "none"), (.permessageDeflate, "permessage-deflate")] {
            let runs = timings[compression] ?? []
            let messages = Double(workload.count)
            print(
                "| \(workload.name) | \(name) | \(format(messages / runs.map(\.seconds).median)) | "
                    + "\(format(runs.map(\.cpu).median / messages * 1e6)) |")
        }
    }

    /// Seconds for Tern's sockets to echo the workload (opening them is not timed), and the CPU
    /// seconds this process spent meanwhile (the servers are other processes).
    static func echo(
        _ client: Client, _ url: String, _ workload: Workload, message: WebSocketMessage? = nil,
        compression: WebSocketCompression = .disabled
    ) async throws -> (seconds: Double, cpu: Double) {
        let payload = message ?? .data(Data((0..<workload.size).map { UInt8(truncatingIfNeeded: $0 % 251) }))
        var sockets: [WebSocket] = []
        for _ in 0..<workload.sockets {
            let options = WebSocketOptions(maximumMessageSize: 64 << 20, compression: compression)
            let socket = client.webSocket(Request<Data>(url), options: options)
            try await socket.opened()
            sockets.append(socket)
        }
        let (started, cpuStarted) = (now(), cpuSeconds())
        try await withThrowingTaskGroup(of: Void.self) { group in
            for socket in sockets {
                group.addTask {
                    var messages = socket.messages.makeAsyncIterator()
                    for _ in 0..<workload.count {
                        try await socket.send(payload)
                        guard let echoed = try await messages.next(), echoed.byteCount == payload.byteCount else {
                            throw TernError.webSocketFailed(code: .protocolError, reason: "the echo did not match")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let (elapsed, cpu) = (now() - started, cpuSeconds() - cpuStarted)
        for socket in sockets { socket.close() }
        for socket in sockets { _ = await socket.ended() }
        return (elapsed, cpu)
    }

    /// Seconds for Tern's byte streams (`StreamEcho`) to echo the same bytes over plain TCP, and
    /// the CPU seconds this process spent meanwhile.
    static func streamEcho(port: Int32, _ workload: Workload) async throws -> (seconds: Double, cpu: Double) {
        var echoes: [StreamEcho] = []
        for _ in 0..<workload.sockets { echoes.append(try await StreamEcho.open(port: port)) }
        defer { echoes.forEach { $0.close() } }
        let payload = Data((0..<workload.size).map { UInt8(truncatingIfNeeded: $0 % 251) })
        let (started, cpuStarted) = (now(), cpuSeconds())
        let failures = await withTaskGroup(of: Int.self) { group in
            for echo in echoes {
                group.addTask {
                    for _ in 0..<workload.count {
                        guard await echo.echo(payload) else { return 1 }
                    }
                    return 0
                }
            }
            return await group.reduce(0, +)
        }
        let (elapsed, cpu) = (now() - started, cpuSeconds() - cpuStarted)
        guard failures == 0 else { throw URLError(.networkConnectionLost) }
        return (elapsed, cpu)
    }

    /// Seconds for blocking TCP sockets (a thread each) to echo the same bytes.
    static func tcpEcho(port: Int32, _ workload: Workload) async throws -> Double {
        let descriptors = try (0..<workload.sockets).map { _ in try connectTCP(port: port) }
        defer { descriptors.forEach { _ = close($0) } }
        let failures = Locked(0)
        let started = now()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let group = DispatchGroup()
            for descriptor in descriptors {
                group.enter()
                Thread {
                    var payload = [UInt8]((0..<workload.size).map { UInt8(truncatingIfNeeded: $0 % 251) })
                    var reply = [UInt8](repeating: 0, count: workload.size)
                    for _ in 0..<workload.count {
                        guard transfer(descriptor, &payload, write: true), transfer(descriptor, &reply, write: false) else {
                            failures.withLock { $0 += 1 }
                            break
                        }
                    }
                    group.leave()
                }.start()
            }
            group.notify(queue: .global()) { continuation.resume() }
        }
        let elapsed = now() - started
        guard failures.withLock({ $0 }) == 0 else { throw URLError(.networkConnectionLost) }
        return elapsed
    }

    /// Seconds the `websockets` client took (its own timing, connecting excluded).
    static func pythonEcho(_ setup: Setup, _ workload: Workload) throws -> Double {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: setup.python)
        process.arguments = [
            setup.client, setup.url, "--sockets", "\(workload.sockets)", "--count", "\(workload.count)", "--size", "\(workload.size)",
        ]
        let output = try process.runReadingOutput().trimmingCharacters(in: .whitespacesAndNewlines)
        guard process.terminationStatus == 0, let seconds = Double(output) else { throw URLError(.badServerResponse) }
        return seconds
    }

    /// Runs this executable again to hold `count` idle sockets open; its KB per socket.
    static func runIdleChild(_ url: String, count: Int, atOnce: Bool) throws -> String {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--ws-idle-child", url, "--count", "\(count)"] + (atOnce ? ["--at-once"] : [])
        return try process.runReadingOutput().trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// In the child: opens one socket (libcurl and the runtime loaded), then `count` more, and
    /// prints the growth of the resident set per socket once all are open and idle. One after
    /// another measures what an idle socket keeps; all at once adds what 1,000 connects in flight
    /// together leave behind in the allocator's heap (freed, but between live objects).
    static func idleChild(_ url: String, count: Int, atOnce: Bool) async {
        let client = Client()
        let first = client.webSocket(Request<Data>(url))
        _ = try? await first.opened()
        try? await Task.sleep(nanoseconds: 200_000_000)
        let before = currentRSSKilobytes()
        var sockets: [WebSocket] = []
        for _ in 0..<count {
            let socket = client.webSocket(Request<Data>(url))
            sockets.append(socket)
            if !atOnce { _ = try? await socket.opened() }
        }
        var opened = 0
        var firstFailure: TernError?
        for socket in sockets {
            do {
                try await socket.opened()
                opened += 1
            } catch {
                firstFailure = firstFailure ?? error
            }
        }
        if let firstFailure { log("tern-bench: a socket did not open: \(firstFailure)") }
        try? await Task.sleep(nanoseconds: 1_000_000_000)
        let after = currentRSSKilobytes()
        print(opened == count ? String(format: "%.1f", (after - before) / Double(count)) : "only \(opened) of \(count) opened")
        for socket in sockets + [first] { socket.close() }
        for socket in sockets + [first] { _ = await socket.ended() }
    }

    private static func connectTCP(port: Int32) throws -> Int32 {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw URLError(.cannotConnectToHost) }
        var noDelay: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &noDelay, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            _ = close(descriptor)
            throw URLError(.cannotConnectToHost)
        }
        return descriptor
    }

    /// Writes or reads all of `bytes`; false on an error or the end of the stream.
    private static func transfer(_ descriptor: Int32, _ bytes: inout [UInt8], write writing: Bool) -> Bool {
        var done = 0
        while done < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                writing
                    ? send(descriptor, buffer.baseAddress! + done, buffer.count - done, 0)
                    : recv(descriptor, buffer.baseAddress! + done, buffer.count - done, 0)
            }
            guard count > 0 else { return false }
            done += count
        }
        return true
    }

    private static func format(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : String(format: "%.3f", value)
    }
}
