import Foundation
#if canImport(os)
import os
#endif

/// The built-in monitor that logs requests: method, URL, status, duration, size, attempts and
/// cache source, with secrets redacted (`Redaction`), to a destination the app gives it.
/// ```swift
/// let api = Client(baseURL: "https://api.example.com") {
///     $0.monitors = [RequestLogger.standardError(level: .debug)]
/// }
/// ```
/// Levels add up: `.error` logs failed requests (not cancellations), `.info` one line per
/// finished request, `.debug` also each attempt, redirect, retry, hold and cache event with the
/// request headers, `.trace` also progress and the bodies (truncated to `bodyLimit` bytes).
/// Thread safety: immutable; it writes from its own serial queue.
public struct RequestLogger: EventMonitor {
    /// How much is logged.
    public enum Level: Int, Sendable, Comparable {
        /// Failed requests (not cancellations).
        case error
        /// One line per finished or cancelled request.
        case info
        /// Also each attempt, redirect, retry, hold and cache event, with headers.
        case debug
        /// Also progress and bodies (truncated).
        case trace
        /// Orders levels from `.error` (least) to `.trace` (most).
        public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// One line of the log.
    /// Thread safety: a value type, safe to share.
    public struct Record: Sendable {
        /// The level the line belongs to.
        public let level: Level
        /// The line, secrets redacted.
        public let message: String
        /// The request it is about.
        public let requestID: UInt64
        /// When it happened.
        public let date: Date
    }

    /// The most detailed level logged.
    public let level: Level
    /// What is hidden; nil uses `Redaction.shared` at the time of each line.
    public let redaction: Redaction?
    /// How many bytes of a body `.trace` shows.
    public let bodyLimit: Int
    /// The logger's serial queue.
    public let queue: DispatchQueue
    private let write: @Sendable (Record) -> Void

    /// Creates a logger writing each record to `write`, e.g. into the app's logging system.
    public init(
        level: Level = .info, redaction: Redaction? = nil, bodyLimit: Int = 1024,
        write: @escaping @Sendable (Record) -> Void
    ) {
        self.level = level
        self.redaction = redaction
        self.bodyLimit = bodyLimit
        self.queue = DispatchQueue(label: "Tern.RequestLogger")
        self.write = write
    }

    /// A logger printing `[Tern] …` lines to standard error.
    public static func standardError(level: Level = .info, redaction: Redaction? = nil) -> RequestLogger {
        RequestLogger(level: level, redaction: redaction) { record in
            FileHandle.standardError.write(Data("[Tern] \(record.message)\n".utf8))
        }
    }

    #if canImport(os)
    /// A logger writing to `os.Logger` (Apple platforms): errors as `.error`, the rest as
    /// `.info` / `.debug`; lines are already redacted, so they are logged as public.
    @available(iOS 14.0, macOS 11.0, tvOS 14.0, watchOS 7.0, *)
    public static func osLog(_ logger: os.Logger, level: Level = .info, redaction: Redaction? = nil) -> RequestLogger {
        RequestLogger(level: level, redaction: redaction) { record in
            switch record.level {
            case .error: logger.error("\(record.message, privacy: .public)")
            case .info: logger.info("\(record.message, privacy: .public)")
            case .debug, .trace: logger.debug("\(record.message, privacy: .public)")
            }
        }
    }
    #endif

    /// Waits until every event received so far is written (before a command-line tool exits).
    public func flush() { queue.sync {} }

    /// Logs `event` if its level is enabled.
    public func receive(_ event: RequestEvent) {
        guard let (lineLevel, text) = line(for: event, redaction: redaction ?? Redaction.shared), lineLevel <= level else { return }
        write(Record(level: lineLevel, message: "#\(event.requestID) " + text, requestID: event.requestID, date: event.date))
    }

    private func line(for event: RequestEvent, redaction: Redaction) -> (Level, String)? {
        let target = "\(event.method) \(redaction.url(event.url))"
        switch event.kind {
        case .created(let request):
            var text = "→ \(target)" + headers(request.allHTTPHeaderFields, redaction)
            if level >= .trace, let body = request.httpBody, !body.isEmpty { text += "\n  body: " + shown(body, form: request, redaction) }
            return (.debug, text)
        case .attemptStarted(let attempt, let request):
            return attempt == 1 ? nil : (.debug, "↻ attempt \(attempt): \(request.httpMethod ?? "GET") \(redaction.url(request.url))")
        case .redirected(let redirect):
            return (.debug, "↪ \(redirect.statusCode) to \(redaction.url(redirect.to))")
        case .responseReceived(let attempt, let response, let bytes):
            return (
                .debug,
                "← \(response.statusCode) \(Self.size(bytes)) (attempt \(attempt))"
                    + headers(response.allHeaderFields as? [String: String], redaction)
            )
        case .attemptFailed(let attempt, let error):
            return (.debug, "✗ attempt \(attempt): \(redaction.text(error.description))")
        case .retrying(let attempt, let delay, let error):
            return (.debug, String(format: "↻ retry after attempt %d in %.2f s: ", attempt, delay) + redaction.text(error.description))
        case .held(let attempt):
            return (.debug, "⏸ held at a restart gate after attempt \(attempt)")
        case .cacheHit(let source):
            return (.debug, "cache hit (\(source))")
        case .cacheMiss:
            return (.debug, "cache miss")
        case .cacheStored:
            return (.debug, "stored in the cache")
        case .progress(let progress):
            return (
                .trace,
                "\(progress.direction == .upload ? "↑" : "↓") \(progress.completedBytes) of \(progress.expectedBytes.map(String.init) ?? "?") bytes"
            )
        case .cancelled(let reason):
            return (.info, "\(target) \(reason)")
        case .finished(let outcome):
            return finished(target, outcome, redaction)
        }
    }

    private func finished(_ target: String, _ outcome: RequestOutcome, _ redaction: Redaction) -> (Level, String)? {
        var details = [String(format: "%.0f ms", outcome.duration * 1000)]
        if outcome.attempts > 1 { details.append("\(outcome.attempts) attempts") }
        if outcome.redirects > 0 { details.append("\(outcome.redirects) redirects") }
        if let source = outcome.source, source != .network { details.append("from \(source)") }
        if let error = outcome.error {
            if error.isCancelled { return nil }  // logged by `.cancelled`
            return (.error, "\(target) ✗ \(redaction.text(error.description)) (\(details.joined(separator: ", ")))")
        }
        var text = "\(target) → \(outcome.statusCode ?? 0), \(Self.size(outcome.bytes)) (\(details.joined(separator: ", ")))"
        if level >= .trace, let body = outcome.body, !body.isEmpty { text += "\n  body: " + shown(body, form: nil, redaction) }
        return (.info, text)
    }

    private func headers(_ headers: [String: String]?, _ redaction: Redaction) -> String {
        guard level >= .debug, let headers, !headers.isEmpty else { return "" }
        return redaction.sortedHeaders(headers).map { "\n  \($0.name): \($0.value)" }.joined()
    }

    private func shown(_ body: Data, form request: URLRequest?, _ redaction: Redaction) -> String {
        redaction.body(body.prefix(bodyLimit), contentType: request?.value(forHTTPHeaderField: "Content-Type"))
            + (body.count > bodyLimit ? "… (\(body.count) bytes)" : "")
    }

    static func size(_ bytes: Int) -> String {
        bytes < 10_000 ? "\(bytes) B" : String(format: "%.1f KB", Double(bytes) / 1024)
    }
}
