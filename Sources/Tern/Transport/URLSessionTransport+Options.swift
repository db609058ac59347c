import Foundation

extension URLSessionTransport {
    /// How a response body reaches the client.
    public enum Delivery: Sendable, Equatable {
        /// Whole, once the response is complete, through the task's completion handler: on Linux
        /// each delegate event costs a hop through the delegate `OperationQueue`, and this path
        /// saves two of them per request (see the Performance article). But a size limit can
        /// only be checked against the `Content-Length` the task announces, by a watchdog every
        /// 50 ms, which URLSession can hold up under load; a body that announces nothing is
        /// checked when complete. URLSession reports nothing until such a response is complete,
        /// so the idle timeout sees no sign of life before: it bounds the whole exchange.
        case buffered
        /// Chunk by chunk as it arrives, through the session delegate. The default: a size limit
        /// refuses an announced `Content-Length` as the head arrives and stops any longer body as
        /// it crosses the limit, under any load; progress is reported; a 401's body is kept.
        case streamed
    }

    /// The settings only the URLSession transport reads (`TransportSettings.urlSession`); the
    /// libcurl transport and custom ones ignore them. Every other transport setting is honoured
    /// by both built-in transports.
    /// Thread safety: a value type, safe to share.
    public struct Options: Sendable {
        /// How response bodies reach the client: `.streamed` (the default: chunk by chunk through
        /// the session delegate, so the size limit holds under any load) or `.buffered` (whole,
        /// through the task's completion handler: faster on Linux, but limits are weaker).
        public var delivery: Delivery
        /// A last chance to adjust the `URLSessionConfiguration` Tern builds (cookies, proxies,
        /// …). Runs once, when the transport is made. Default: no change.
        public var configureSession: @Sendable (URLSessionConfiguration) -> Void

        /// Creates options; every parameter defaults to the documented default.
        public init(delivery: Delivery = .streamed, configureSession: @escaping @Sendable (URLSessionConfiguration) -> Void = { _ in }) {
            self.delivery = delivery
            self.configureSession = configureSession
        }
    }
}
