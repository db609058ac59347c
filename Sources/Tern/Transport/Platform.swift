import Foundation

/// Where URLSession differs between Apple platforms and Linux (swift-corelibs-foundation), in one place.
enum Platform {
    /// Whether the redirect decision of a task already cancelled is answered. Apple platforms
    /// expect every completion handler to be called (and handle a late answer); on Linux an answer
    /// that arrives after the cancel stops the process (`HTTPURLProtocol.swift:705`), and the
    /// cancel completes the task without it.
    static var answersRedirectOfCancelledTask: Bool {
        #if canImport(Darwin)
        true
        #else
        false
        #endif
    }

    /// Whether creating or resuming a task can wait for the session's own work. On Linux
    /// FoundationNetworking does both with a synchronous call onto the session's work queue, which
    /// a cancelled large download or a gzip bomb still being inflated keeps busy for seconds; so
    /// tasks are made on a queue of the transport's there, never on the caller's thread. Apple's
    /// URLSession returns at once, and makes them where they are asked for.
    static var waitsToStartTasks: Bool {
        #if canImport(Darwin)
        false
        #else
        true
        #endif
    }

    /// The idle timeout to give URLSession for a request whose idle timeout is `seconds`.
    ///
    /// Linux truncates `timeoutInterval` to whole seconds (0.5 s fires at once, 1.5 s after 1 s),
    /// so Tern enforces the timeout with its own timer on every platform and gives URLSession a
    /// whole number of seconds past it, so that Tern's timer is the one that fires.
    /// No timeout (`.infinity`) gets a week: FoundationNetworking on Linux stops the process on
    /// an infinite `timeoutInterval` (it converts it to an integer), and URLSession's idle timer
    /// would otherwise end a quiet stream.
    static func sessionTimeout(forDeadline seconds: TimeInterval) -> TimeInterval {
        guard seconds.isFinite else { return 7 * 24 * 3600 }
        return max(1, seconds.rounded(.up) + 1)
    }

    /// `error` with the code Apple platforms give the same failure.
    ///
    /// FoundationNetworking reports a body cut short by the server ("transfer closed with N bytes
    /// remaining to read", libcurl's partial-file error) as code -1 (`.unknown`); Apple platforms
    /// report `.networkConnectionLost`, which retry policies and resumable downloads act on.
    static func normalized(_ error: URLError) -> URLError {
        #if canImport(Darwin)
        return error
        #else
        guard error.code == .unknown else { return error }
        // libcurl refuses a Content-Length that is not a number before URLSession sees the head:
        // the same framing error as Tern's own check (`ResponseFraming`) and the libcurl transport.
        if error.localizedDescription.hasPrefix("Invalid Content-Length") {
            return ResponseFraming.error("invalid Content-Length (libcurl: \(error.localizedDescription))")
        }
        guard error.localizedDescription.contains("transfer closed with") else { return error }
        var info = error.userInfo
        info[NSUnderlyingErrorKey] = error
        return URLError(.networkConnectionLost, userInfo: info)
        #endif
    }

    /// Whether a running URLSession task can be paused with `suspend()` and go on with `resume()`.
    ///
    /// Measured on Linux (2026-11-30, `StreamingTests`): `resume()` after `suspend()` of a running
    /// data task sends the request again and delivers the body again from its first byte, after
    /// the bytes already delivered (a 30 MB body arrived as 30.3 MB, the server saw two GETs).
    /// So Tern never suspends a task there: a slow stream reader's buffer is bounded by the size
    /// limit instead.
    static var pausesTasks: Bool {
        #if canImport(Darwin)
        true
        #else
        false
        #endif
    }

    /// A body produced while it is sent, as URLSession's `httpBodyStream`.
    ///
    /// Apple platforms: one end of a bound stream pair, filled by a thread of its own (a subclass
    /// of `InputStream` is not supported there). Linux: FoundationNetworking reads the stream on
    /// the session's work queue, so an `InputStream` whose `read` waits for the producer (bound
    /// pairs do not exist there); while it waits, that session's other transfers wait too.
    static func bodyInputStream(for stream: RequestBodyStream) -> InputStream {
        #if canImport(Darwin)
        return BoundBodyPump.inputStream(for: stream)
        #else
        return ProducedBodyInputStream(stream)
        #endif
    }

    /// Whether URLSession sends a streamed body with the request's `Content-Length`. Linux sends
    /// every `httpBodyStream` chunked (measured), so the header would contradict the framing there
    /// and is dropped.
    static var sendsContentLengthOfStreams: Bool {
        #if canImport(Darwin)
        true
        #else
        false
        #endif
    }
}
