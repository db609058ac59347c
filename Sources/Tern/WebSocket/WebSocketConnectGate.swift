import Foundation

/// RFC 6455 §4.1: at most one WebSocket to a host and port is connecting at a time (from the
/// connect to the end of the opening handshake); the others wait for it, in the order they came,
/// and start when it has opened or failed. A server is not flooded by a burst of sockets, and a
/// burst holds one connect's state at a time rather than one per socket. The host is the URL's,
/// as written: two names for one address are two hosts here.
/// Thread safety: safe to use from any thread (one lock); `start` closures run outside it.
final class WebSocketConnectGate: Sendable {
    /// A socket's place: connecting, or waiting its turn.
    struct Ticket: Sendable, Hashable {
        fileprivate let key: String
        fileprivate let number: UInt64
    }

    private struct Line {
        var connecting: UInt64?
        var waiting: [(number: UInt64, start: @Sendable () -> Void)] = []
    }

    /// The gate every client's sockets share: the rule is per host, not per client.
    static let shared = WebSocketConnectGate()

    private let state = Locked((lines: [String: Line](), next: UInt64(0)))

    /// The key of `url`'s host and port (the scheme's default port when it has none).
    static func key(for url: URL) -> String {
        let isSecure = ["https", "wss"].contains(url.scheme?.lowercased() ?? "")
        return "\((url.host ?? "").lowercased()):\(url.port ?? (isSecure ? 443 : 80))"
    }

    /// Runs `start` at once when no socket to `key` is connecting, else when its turn comes.
    /// The ticket leaves the line (`leave`) once the socket opened or ended.
    func enter(_ key: String, start: @escaping @Sendable () -> Void) -> Ticket {
        let (ticket, isNow) = state.withLock { state -> (Ticket, Bool) in
            state.next += 1
            let ticket = Ticket(key: key, number: state.next)
            var line = state.lines[key] ?? Line()
            defer { state.lines[key] = line }
            guard line.connecting == nil else {
                line.waiting.append((ticket.number, start))
                return (ticket, false)
            }
            line.connecting = ticket.number
            return (ticket, true)
        }
        if isNow { start() }
        return ticket
    }

    /// The socket opened or ended: the next one waiting for its host starts; a socket still
    /// waiting leaves the line. Leaving twice does nothing.
    func leave(_ ticket: Ticket) {
        let next = state.withLock { state -> (@Sendable () -> Void)? in
            guard var line = state.lines[ticket.key] else { return nil }
            var next: (@Sendable () -> Void)?
            if line.connecting == ticket.number {
                line.connecting = nil
                if !line.waiting.isEmpty {
                    let first = line.waiting.removeFirst()
                    line.connecting = first.number
                    next = first.start
                }
            } else {
                line.waiting.removeAll { $0.number == ticket.number }
            }
            state.lines[ticket.key] = line.connecting == nil && line.waiting.isEmpty ? nil : line
            return next
        }
        next?()
    }
}
