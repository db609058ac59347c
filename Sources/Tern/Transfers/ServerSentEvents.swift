import Foundation

/// One event of a `text/event-stream` response, as the HTML standard's parser dispatches it.
/// Thread safety: a value type, safe to share.
public struct ServerSentEvent: Sendable, Equatable {
    /// The event type: the `event` field, `"message"` when the stream gave none.
    public var event: String
    /// The `data` fields of the event, joined with line feeds.
    public var data: String
    /// The last event ID the stream set (an `id` field of this event or an earlier one), if any;
    /// what a reconnecting client sends as `Last-Event-ID`.
    public var id: String?
    /// The reconnection time in milliseconds the stream last set with a `retry` field, if any.
    public var retry: Int?

    /// Creates an event (for tests and stubs).
    public init(event: String = "message", data: String, id: String? = nil, retry: Int? = nil) {
        self.event = event
        self.data = data
        self.id = id
        self.retry = retry
    }
}

/// The event-stream parser of the HTML standard (9.2.6), fed bytes as they arrive: lines end
/// with CRLF, LF or CR (a CRLF split across chunks counts once); a leading byte-order mark is
/// dropped; `:` lines are comments; a field's value loses one leading space; `data` lines
/// accumulate; `id` (without NUL) sets the last event ID; `retry` (digits only) sets the
/// reconnection time; unknown fields are ignored; a blank line dispatches the event, unless its
/// data is empty; an event still open when the stream ends is dropped.
/// Thread safety: a value type; feed one from one thread at a time.
struct ServerSentEventParser: Sendable {
    /// The most bytes one event may hold: its current line and its data so far.
    let limit: Int
    private var line = Data()
    private var skipLineFeed = false
    private var atStart = true
    private var eventType = ""
    private var data = ""
    private var hasData = false
    private var lastEventID: String?
    private var retry: Int?

    init(limit: Int = ServerSentEvents.defaultMaximumEventSize) {
        self.limit = limit
    }

    /// Parses `chunk`; returns the events it completes. Throws `.responseTooLarge(limit:)` when
    /// an event (its data and its current line) grows past `limit`.
    mutating func feed(_ chunk: Data) throws(TernError) -> [ServerSentEvent] {
        var events: [ServerSentEvent] = []
        for byte in chunk {
            if skipLineFeed {
                skipLineFeed = false
                if byte == 0x0A { continue }
            }
            switch byte {
            case 0x0A, 0x0D:
                skipLineFeed = byte == 0x0D
                if let event = process(line) { events.append(event) }
                line.removeAll(keepingCapacity: true)
            default:
                line.append(byte)
            }
        }
        if line.count + data.utf8.count > limit { throw .responseTooLarge(limit: limit) }
        return events
    }

    private mutating func process(_ bytes: Data) -> ServerSentEvent? {
        var text = String(decoding: bytes, as: UTF8.self)
        if atStart {
            atStart = false
            if text.hasPrefix("\u{FEFF}") { text.removeFirst() }
        }
        if text.isEmpty { return dispatch() }
        if text.hasPrefix(":") { return nil }
        let field: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.hasPrefix(" ") { value = value.dropFirst() }
        } else {
            field = text[...]
            value = ""
        }
        switch field {
        case "event": eventType = String(value)
        case "data":
            data += hasData ? "\n" + value : String(value)
            hasData = true
        case "id" where !value.contains("\0"): lastEventID = String(value)
        case "retry" where !value.isEmpty && value.allSatisfy(\.isASCII) && value.allSatisfy(\.isNumber): retry = Int(value)
        default: break
        }
        return nil
    }

    private mutating func dispatch() -> ServerSentEvent? {
        defer {
            eventType = ""
            data = ""
            hasData = false
        }
        guard hasData else { return nil }
        return ServerSentEvent(event: eventType.isEmpty ? "message" : eventType, data: data, id: lastEventID, retry: retry)
    }
}

/// Splits bytes into lines at LF (a CR before it is dropped), decoding each as UTF-8 once whole:
/// a character split across chunks arrives intact.
/// Thread safety: a value type; feed one from one thread at a time.
struct LineSplitter: Sendable {
    /// The most bytes one line may hold (its line ending aside).
    let limit: Int
    private var pending = Data()

    init(limit: Int = Lines.defaultMaximumLineLength) {
        self.limit = limit
    }

    /// The lines `chunk` completes. Throws `.responseTooLarge(limit:)` for a line longer than
    /// `limit`, as soon as it is (its end need not have arrived).
    mutating func feed(_ chunk: Data) throws(TernError) -> [String] {
        var lines: [String] = []
        var start = chunk.startIndex
        while let newline = chunk[start...].firstIndex(of: 0x0A) {
            // One byte over: room for the CR a CRLF ending drops.
            if pending.count + (newline - start) > limit + 1 { throw .responseTooLarge(limit: limit) }
            pending.append(chunk[start..<newline])
            if pending.last == 0x0D { pending.removeLast() }
            lines.append(String(decoding: pending, as: UTF8.self))
            pending.removeAll(keepingCapacity: true)
            start = chunk.index(after: newline)
        }
        if pending.count + (chunk.endIndex - start) > limit { throw .responseTooLarge(limit: limit) }
        pending.append(chunk[start...])
        return lines
    }

    /// The last line, when the body did not end with a line feed.
    mutating func finish() -> String? {
        defer { pending = Data() }
        return pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self)
    }
}
