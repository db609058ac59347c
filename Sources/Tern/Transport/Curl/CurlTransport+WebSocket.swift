#if canImport(Glibc) || canImport(Musl)
import Foundation

extension CurlTransport: WebSocketTransport {
    /// Opens the socket's connection with libcurl's connect-only mode and this transport's
    /// settings (proxy, TLS, pins, host overrides); nil once invalidated.
    public func openWebSocket(_ attempt: WebSocketAttempt) -> (any TransportTask)? {
        guard !isInvalidated else { return nil }
        return attempt.connectWithLibcurl(settings)
    }
}

extension WebSocketAttempt {
    /// Opens the attempt's connection with libcurl, as both transports do on Linux: with
    /// `settings`, else the client's.
    func connectWithLibcurl(_ settings: CurlSettings? = nil) -> any TransportTask {
        switch LibCurl.loaded {
        case .success(let curl):
            let settings = settings ?? CurlSettings(self.settings, curl: curl)
            let url = request.url ?? URL(fileURLWithPath: "/")
            return connect { queue in
                CurlSocketStream(curl: curl, settings: settings, url: url, connectTimeout: request.timeoutInterval, queue: queue)
            }
        case .failure(let failure):
            return fail(.unsupportedConfiguration("WebSocket needs libcurl on Linux: \(failure)"))
        }
    }
}

extension TransportSettings {
    /// A libcurl connection to `url` (`http` or `https`) with these settings, reporting on
    /// `queue`; or why there is none (no libcurl). Package-visible for tern-bench's TCP floor.
    package func libcurlSocketStream(
        to url: URL, connectTimeout: TimeInterval, queue: DispatchQueue
    ) -> Result<any WebSocketByteStream, TernError> {
        LibCurl.loaded.map { curl in
            CurlSocketStream(curl: curl, settings: CurlSettings(self, curl: curl), url: url, connectTimeout: connectTimeout, queue: queue)
        }.mapError { .unsupportedConfiguration("WebSocket needs libcurl on Linux: \($0)") }
    }
}
#endif
