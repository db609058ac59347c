import Foundation
import Tern
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `weather search -i`: search as you type. Every keystroke sends a search; a newer one cancels
/// the older one still in flight (`.cancelOlder` with the key "search"), so a stale result never
/// reaches the screen. The screen shows the results for the current text and how many stale
/// searches were cancelled. Enter, Escape or Ctrl-D ends it.
// Sendable: `text` and `cancelled` are only touched while holding `lock`.
final class InteractiveSearch: @unchecked Sendable {
    /// Result rows shown under the prompt: the screen stays short enough to keep the prompt in view.
    static let visibleRows = 12
    private let lock = NSLock()
    private var text = ""
    private var cancelled = 0
    private let api: Client

    init(api: Client) {
        self.api = api
    }

    func run() -> Int32 {
        let terminal = RawTerminal()
        defer { terminal.restore() }
        render(results: nil)
        var byte: UInt8 = 0
        // A character beyond ASCII (北京, what this app's users type) arrives as several bytes.
        var sequence: [UInt8] = []
        while read(STDIN_FILENO, &byte, 1) == 1 {
            switch byte {
            case 10, 13, 27, 4, 3: return finish()
            case 127, 8: edit { if !$0.isEmpty { $0.removeLast() } }
            case 32...126: edit { $0.append(Character(UnicodeScalar(byte))) }
            case 0xC2...0xF4: sequence = [byte]
            case 0x80...0xBF where !sequence.isEmpty:
                sequence.append(byte)
                if sequence.count == Self.utf8Length(leading: sequence[0]) {
                    let typed = String(decoding: sequence, as: UTF8.self)
                    sequence = []
                    edit { $0 += typed }
                }
            default: sequence = []
            }
        }
        return finish()
    }

    /// How many bytes a UTF-8 sequence starting with `byte` has.
    private static func utf8Length(leading byte: UInt8) -> Int {
        switch byte {
        case 0xC2...0xDF: 2
        case 0xE0...0xEF: 3
        default: 4
        }
    }

    private func edit(_ change: (inout String) -> Void) {
        let current = lock.withLock { () -> String in
            change(&text)
            return text
        }
        render(results: nil)
        guard !current.isEmpty else { return }
        let request = WeatherAPI.search(query: current)
        api.send(request, queue: .immediate) { [self] result in
            switch result {
            case .success(let response):
                // With `.cancelOlder` an older search never succeeds once a newer one is sent; but
                // one that succeeded just before a key was pressed can reach this line after it:
                // its results answer an older text, and the newer search's will follow.
                render(results: response.value.cities, for: current)
            case .failure(let error) where error.isCancelled:
                lock.withLock { cancelled += 1 }
            case .failure(let error):
                FileHandle.standardOutput.write(Data("\r\nSearch failed: \(WeatherApp.explain(error))\r\n".utf8))
            }
        }
    }

    private func render(results: [City]?, for query: String? = nil) {
        let screen = lock.withLock { () -> String? in
            if let query, query != text { return nil }
            var lines = ["\u{1B}[2J\u{1B}[Hsearch> \(text)"]
            if let results {
                lines.append(results.isEmpty ? "  no city matches" : "  \(WeatherApp.cities(results.count)):")
                // A short screen keeps the prompt in view: the first rows, then how many more.
                lines += results.prefix(Self.visibleRows).map { "  " + WeatherApp.row($0) }
                if results.count > Self.visibleRows {
                    lines.append("  … and \(results.count - Self.visibleRows) more: type more letters")
                }
            }
            lines.append("  stale searches cancelled: \(cancelled)")
            return lines.joined(separator: "\r\n")
        }
        if let screen { FileHandle.standardOutput.write(Data((screen + "\r\n").utf8)) }
    }

    private func finish() -> Int32 {
        // Let the search for the final text arrive before leaving.
        Thread.sleep(forTimeInterval: 0.5)
        let (final, count) = lock.withLock { (text, cancelled) }
        print("\r\nfinal query: \(final); stale searches cancelled: \(count)\r")
        return 0
    }
}

/// Puts the terminal in raw mode (no line buffering, no echo) and restores it.
private struct RawTerminal {
    private var saved = termios()
    private let isTerminal = isatty(STDIN_FILENO) == 1

    init() {
        guard isTerminal else { return }
        tcgetattr(STDIN_FILENO, &saved)
        var raw = saved
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON)
        tcsetattr(STDIN_FILENO, TCSANOW, &raw)
    }

    func restore() {
        guard isTerminal else { return }
        var saved = saved
        tcsetattr(STDIN_FILENO, TCSANOW, &saved)
    }
}
