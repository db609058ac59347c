import Foundation

extension URLSessionTransport: WebSocketTransport {
    /// Opens the socket's connection: on Apple platforms a stream task of this transport's
    /// session, which Tern's RFC 6455 reads and writes; on Linux libcurl's connect-only
    /// connection with the client's settings (FoundationNetworking's stream and WebSocket tasks
    /// fail there). Nil once invalidated.
    public func openWebSocket(_ attempt: WebSocketAttempt) -> (any TransportTask)? {
        guard !hasBeenInvalidated else { return nil }
        #if canImport(Darwin)
        if case .http = attempt.settings.proxy.kind {
            return attempt.fail(
                .unsupportedConfiguration("a WebSocket on Apple platforms connects directly: an explicit HTTP proxy is not supported"))
        }
        let url = attempt.request.url ?? URL(fileURLWithPath: "/")
        return attempt.connect { queue in
            StreamTaskSocketStream(url: url, transport: self, writeTimeout: attempt.request.timeoutInterval, queue: queue)
        }
        #else
        return attempt.connectWithLibcurl()
        #endif
    }
}
