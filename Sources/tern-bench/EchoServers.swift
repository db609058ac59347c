import Foundation
import Tern

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `tern-bench --echo-servers TCP_PORT WS_PORT`: the floor's two servers on 127.0.0.1, run by
/// scripts/bench-websocket.sh as a process of their own. A plain TCP echo, and a minimal WebSocket
/// echo (the handshake, then each frame returned unmasked with its opcode, a ping answered with
/// a pong, a close returned), both on one thread and one `poll` loop, the same code apart from
/// the framing. Compiled, the WebSocket one's protocol work is a small part of its cost; in
/// Python (the `websockets` server) it is most of it, and on two cores a server's work slows the
/// client beside it: so the floor's comparison is of the clients, not of the servers.
/// Thread safety: one thread.
enum EchoServers {
    /// One client's connection: what it sent and not yet answered, and what waits to be written.
    private final class Connection {
        let descriptor: Int32
        let isWebSocket: Bool
        var isUpgraded = false
        var input: [UInt8] = []
        var output: [UInt8] = []

        init(descriptor: Int32, isWebSocket: Bool) {
            self.descriptor = descriptor
            self.isWebSocket = isWebSocket
        }
    }

    /// Serves both ports until killed; returns only when a port cannot be listened on.
    static func run(tcpPort: UInt16, webSocketPort: UInt16) -> String {
        // A client gone mid-write is an error from `send`, not a signal that stops the server.
        signal(SIGPIPE, SIG_IGN)
        guard let tcp = listening(on: tcpPort), let webSocket = listening(on: webSocketPort) else {
            return "tern-bench --echo-servers: cannot listen on 127.0.0.1:\(tcpPort) and :\(webSocketPort)"
        }
        var connections: [Int32: Connection] = [:]
        var descriptors: [pollfd] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            descriptors.removeAll(keepingCapacity: true)
            descriptors.append(pollfd(fd: tcp, events: Int16(POLLIN), revents: 0))
            descriptors.append(pollfd(fd: webSocket, events: Int16(POLLIN), revents: 0))
            for connection in connections.values {
                let events = POLLIN | (connection.output.isEmpty ? 0 : POLLOUT)
                descriptors.append(pollfd(fd: connection.descriptor, events: Int16(events), revents: 0))
            }
            guard poll(&descriptors, nfds_t(descriptors.count), -1) > 0 else { continue }
            for ready in descriptors where ready.revents != 0 {
                if ready.fd == tcp || ready.fd == webSocket {
                    while let accepted = acceptClient(from: ready.fd) {
                        connections[accepted] = Connection(descriptor: accepted, isWebSocket: ready.fd == webSocket)
                    }
                    continue
                }
                guard let connection = connections[ready.fd] else { continue }
                var isOpen = true
                if ready.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 { isOpen = receive(connection, &buffer) }
                if isOpen, !connection.output.isEmpty { isOpen = flush(connection) }
                if !isOpen {
                    _ = close(connection.descriptor)
                    connections[ready.fd] = nil
                }
            }
        }
    }

    /// Reads what the client sent and answers it; false once the connection is over.
    private static func receive(_ connection: Connection, _ buffer: inout [UInt8]) -> Bool {
        let count = buffer.withUnsafeMutableBytes { recv(connection.descriptor, $0.baseAddress, $0.count, 0) }
        if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR }
        guard count > 0 else { return false }
        guard connection.isWebSocket else {
            connection.output.append(contentsOf: buffer[..<count])
            return true
        }
        connection.input.append(contentsOf: buffer[..<count])
        if !connection.isUpgraded, !upgrade(connection) { return true }
        var start = 0
        while let (consumed, isClose) = echoFrame(connection.input, from: start, into: &connection.output) {
            start += consumed
            if isClose {
                _ = flush(connection)
                return false
            }
        }
        connection.input.removeFirst(start)
        return true
    }

    /// Answers the opening handshake once its head has come; false until then.
    private static func upgrade(_ connection: Connection) -> Bool {
        let input = connection.input
        guard let end = (0..<max(0, input.count - 3)).first(where: { input[$0..<$0 + 4].elementsEqual([13, 10, 13, 10]) }) else {
            return false
        }
        let head = String(decoding: input[..<end], as: UTF8.self)
        let key =
            head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }
            .map { $0.dropFirst("sec-websocket-key:".count).trimmingCharacters(in: .whitespaces) } ?? ""
        let accept = Data(SHA1.digest(Array((key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11").utf8))).base64EncodedString()
        let answer =
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(accept)\r\n\r\n"
        connection.output.append(contentsOf: answer.utf8)
        connection.input.removeFirst(end + 4)
        connection.isUpgraded = true
        return true
    }

    /// Echoes the frame at `start` unmasked (a ping as a pong) into `output`: the bytes it took
    /// and whether it was a close; nil until a whole frame has come.
    private static func echoFrame(_ input: [UInt8], from start: Int, into output: inout [UInt8]) -> (Int, Bool)? {
        let available = input.count - start
        guard available >= 2 else { return nil }
        var length = Int(input[start + 1] & 0x7F)
        var header = 2
        if length == 126 {
            guard available >= 4 else { return nil }
            (length, header) = (Int(input[start + 2]) << 8 | Int(input[start + 3]), 4)
        } else if length == 127 {
            guard available >= 10 else { return nil }
            (length, header) = ((0..<8).reduce(0) { $0 << 8 | Int(input[start + 2 + $1]) }, 10)
        }
        let masked = input[start + 1] & 0x80 != 0
        let payloadStart = start + header + (masked ? 4 : 0)
        guard input.count >= payloadStart + length else { return nil }
        let opcode = input[start] & 0x0F
        output.append(opcode == 0x9 ? 0x8A : input[start])
        switch length {
        case 0...125: output.append(UInt8(length))
        case 126...0xFFFF: output.append(contentsOf: [126, UInt8(length >> 8), UInt8(length & 0xFF)])
        default: output.append(127); output.append(contentsOf: (0..<8).map { UInt8(truncatingIfNeeded: length >> (56 - $0 * 8)) })
        }
        let key: UInt32 = masked ? input.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: payloadStart - 4, as: UInt32.self) } : 0
        let first = output.count
        output.append(contentsOf: input[payloadStart..<(payloadStart + length)])
        output.withUnsafeMutableBytes { unmask(UnsafeMutableRawBufferPointer(rebasing: $0[first...]), key: key) }
        return (payloadStart + length - start, opcode == 0x8)
    }

    /// XORs `payload` with `key` (its four bytes in memory order) repeated: a word at a time.
    private static func unmask(_ payload: UnsafeMutableRawBufferPointer, key: UInt32) {
        guard key != 0, let base = payload.baseAddress else { return }
        let word = UInt64(key) | UInt64(key) << 32
        let words = payload.count / 8
        for index in 0..<words {
            base.storeBytes(
                of: base.loadUnaligned(fromByteOffset: index * 8, as: UInt64.self) ^ word, toByteOffset: index * 8, as: UInt64.self)
        }
        for index in words * 8..<payload.count {
            payload[index] ^= withUnsafeBytes(of: key) { $0[index & 3] }
        }
    }

    /// Writes what waits for the client, as much as the socket takes; false once it failed.
    private static func flush(_ connection: Connection) -> Bool {
        let count = connection.output.withUnsafeBytes { send(connection.descriptor, $0.baseAddress, $0.count, 0) }
        if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR }
        connection.output.removeFirst(count)
        return true
    }

    private static func listening(on port: UInt16) -> Int32? {
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { return nil }
        var yes: Int32 = 1
        setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(descriptor, 1_024) == 0 else {
            _ = close(descriptor)
            return nil
        }
        _ = fcntl(descriptor, F_SETFL, O_NONBLOCK)
        return descriptor
    }

    /// A client waiting on `listener`, non-blocking and without Nagle's delay; nil when none waits.
    private static func acceptClient(from listener: Int32) -> Int32? {
        let descriptor = accept(listener, nil, nil)
        guard descriptor >= 0 else { return nil }
        _ = fcntl(descriptor, F_SETFL, O_NONBLOCK)
        var yes: Int32 = 1
        setsockopt(descriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
        return descriptor
    }
}
