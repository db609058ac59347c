import Foundation

/// What an attempt (or the cache) produced for a request: a response and its whole body.
struct RawResponse: Sendable {
    /// The status and headers; `response` builds Foundation's value from them when needed.
    let head: ResponseHead
    let data: Data
    var source: ResponseSource = .network
    /// How the exchange went; nil for an answer from the cache alone.
    var metrics: Metrics?

    /// Foundation's response (built on first use when the transport sent a `ResponseHead`).
    var response: HTTPURLResponse { head.httpResponse }
}
