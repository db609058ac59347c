import Foundation
import Testing

@testable import Tern

/// The connection's state machine without sockets: every event in every phase (a table), and
/// random walks that must end exactly once, drain only after a close frame of Tern's, and never
/// call anything but the server's close frame `.closed`.
@Suite struct WebSocketStateMachineTests {
    typealias Machine = WebSocketStateMachine
    typealias Phase = WebSocketStateMachine.Phase

    enum Event: CaseIterable, CustomStringConvertible {
        case start, connected, upgraded, close, closeFrame, violation, fail, streamEnded, streamFailed, closeTimeout

        func apply(to machine: inout Machine) -> Machine.Action {
            switch self {
            case .start: machine.start()
            case .connected: machine.connected()
            case .upgraded: machine.upgraded()
            case .close: machine.closeRequested(.normalClosure, reason: "bye")
            case .closeFrame: machine.closeFrameReceived(.goingAway, reason: "restart")
            case .violation: machine.violation(WebSocketViolation(code: .protocolError, reason: "bad"))
            case .fail: machine.fail(.timedOut(after: 1))
            case .streamEnded: machine.streamEnded(nil)
            case .streamFailed: machine.streamEnded(URLError(.networkConnectionLost))
            case .closeTimeout: machine.closeTimedOut(after: 5)
            }
        }

        var description: String { "\(self)" }
    }

    /// A machine walked to `phase` by the ordinary events.
    static func machine(in phase: Phase) -> Machine {
        var machine = Machine()
        let path: [Event]
        switch phase {
        case .idle: path = []
        case .connecting: path = [.start]
        case .handshaking: path = [.start, .connected]
        case .open: path = [.start, .connected, .upgraded]
        case .closing: path = [.start, .connected, .upgraded, .close]
        case .draining: path = [.start, .connected, .upgraded, .closeFrame]
        case .ended: path = [.start, .connected, .upgraded, .fail]
        }
        for event in path { _ = event.apply(to: &machine) }
        #expect(machine.phase == phase)
        return machine
    }

    static let closedByServer = WebSocketEnding.closed(.goingAway, reason: "restart")
    static let violated = WebSocketEnding.failed(.webSocketFailed(code: .protocolError, reason: "bad"))
    static let timedOut = WebSocketEnding.failed(.timedOut(after: 1))
    static let dropped = WebSocketEnding.failed(
        .webSocketFailed(code: .abnormalClosure, reason: "the connection ended without a close frame"))
    static let lost = WebSocketEnding.failed(.transport(URLError(.networkConnectionLost)))

    /// What each event does in each phase: the action and the phase after it.
    @Test func everyEventInEveryPhase() {
        let ended = Machine.Action.none
        let table: [(Phase, Event, Machine.Action, Phase)] = [
            (.idle, .start, .connect, .connecting),
            (.idle, .connected, ended, .idle),
            (.idle, .close, .end(.failed(.cancelled(.explicit)), close: nil, reason: "", drains: false), .ended),
            (.idle, .fail, .end(Self.timedOut, close: nil, reason: "", drains: false), .ended),
            (.idle, .closeFrame, ended, .idle),
            (.connecting, .start, ended, .connecting),
            (.connecting, .connected, .writeUpgrade, .handshaking),
            (.connecting, .upgraded, ended, .connecting),
            (.connecting, .close, .end(.failed(.cancelled(.explicit)), close: nil, reason: "", drains: false), .ended),
            (.connecting, .streamFailed, .end(Self.lost, close: nil, reason: "", drains: false), .ended),
            (.handshaking, .upgraded, .open, .open),
            (.handshaking, .closeFrame, ended, .handshaking),
            (.handshaking, .violation, ended, .handshaking),
            (.handshaking, .streamEnded, .end(Self.dropped, close: nil, reason: "", drains: false), .ended),
            (.handshaking, .fail, .end(Self.timedOut, close: nil, reason: "", drains: false), .ended),
            (.open, .start, ended, .open),
            (.open, .close, .writeClose(.normalClosure, reason: "bye"), .closing),
            (.open, .closeFrame, .end(Self.closedByServer, close: .goingAway, reason: "", drains: true), .draining),
            (.open, .violation, .end(Self.violated, close: .protocolError, reason: "bad", drains: true), .draining),
            (.open, .fail, .end(Self.timedOut, close: .goingAway, reason: "", drains: false), .ended),
            (.open, .streamEnded, .end(Self.dropped, close: nil, reason: "", drains: false), .ended),
            (.open, .closeTimeout, ended, .open),
            (.closing, .close, ended, .closing),
            (.closing, .closeFrame, .end(Self.closedByServer, close: nil, reason: "", drains: true), .draining),
            (.closing, .violation, .end(Self.violated, close: nil, reason: "", drains: true), .draining),
            (.closing, .closeTimeout, .end(.failed(.timedOut(after: 5)), close: nil, reason: "", drains: false), .ended),
            (
                .closing, .streamEnded,
                .end(
                    .failed(.webSocketFailed(code: .abnormalClosure, reason: "the connection ended before the server's close frame")),
                    close: nil, reason: "", drains: false), .ended
            ),
            (.draining, .streamEnded, .release(Self.closedByServer), .ended),
            (.draining, .streamFailed, .release(Self.closedByServer), .ended),
            (.draining, .closeTimeout, .release(Self.closedByServer), .ended),
            (.draining, .close, ended, .draining),
            (.draining, .fail, ended, .draining),
            (.draining, .closeFrame, ended, .draining),
            (.ended, .close, ended, .ended),
            (.ended, .fail, ended, .ended),
            (.ended, .streamEnded, ended, .ended),
            (.ended, .closeFrame, ended, .ended),
            (.ended, .start, ended, .ended),
        ]
        for (phase, event, action, after) in table {
            var machine = Self.machine(in: phase)
            let done = event.apply(to: &machine)
            #expect(done == action, "\(phase) + \(event)")
            #expect(machine.phase == after, "\(phase) + \(event)")
        }
        // Every pair is covered, if not by a row, then by the walk below.
        #expect(Set(table.map { "\($0.0)" }).count == 7)
    }

    /// Random events from each start: one ending, decided once; `.closed` only after the server's
    /// close frame; a release only after a drain; the sent close code stays the first one.
    @Test func randomWalksEndOnceAndHonestly() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            var machine = Machine()
            var endings = 0, releases = 0
            var sawCloseFrame = false, drained = false
            var firstSent: WebSocketCloseCode?
            for _ in 0..<12 {
                let event = Event.allCases.randomElement(using: &generator)!
                let before = machine.phase
                let action = event.apply(to: &machine)
                if event == .closeFrame, before == .open || before == .closing { sawCloseFrame = true }
                switch action {
                case .end(let ending, let code, _, let drains):
                    endings += 1
                    drained = drains
                    if case .closed = ending { #expect(sawCloseFrame, "closed without the server's close frame") }
                    if code != nil { #expect(before == .open, "a close frame written from \(before)") }
                case .release:
                    releases += 1
                    #expect(drained, "released without a drain")
                case .writeClose(let code, _):
                    #expect(before == .open)
                    firstSent = firstSent ?? code
                default:
                    break
                }
                if let sent = machine.sentClose?.code, let firstSent { #expect(sent == firstSent) }
            }
            #expect(endings <= 1 && releases <= endings)
            #expect(machine.hasEnded == (endings == 1))
            if machine.phase == .ended || machine.phase == .draining { #expect(machine.ending != nil) }
        }
    }
}
