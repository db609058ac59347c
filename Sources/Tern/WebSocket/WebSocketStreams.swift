import Foundation

/// Where each platform gets a WebSocket's connection: the one place its platforms differ.
package enum WebSocketStreams {
    /// A connection to `url` (`http` or `https`: the WebSocket's scheme made HTTP's) with the
    /// client's transport settings, reporting on `queue`; or why there is none here.
    package static func make(
        to url: URL, settings: TransportSettings, connectTimeout: TimeInterval, queue: DispatchQueue
    ) -> Result<any WebSocketByteStream, TernError> {
        #if canImport(Glibc) || canImport(Musl)
        // On Linux both transports use libcurl's connection: URLSession's WebSocket task fails
        // there (swift.org's libcurl is built without WebSocket support).
        switch LibCurl.loaded {
        case .success(let curl):
            let stream = CurlSocketStream(
                curl: curl, settings: CurlSettings(settings, curl: curl), url: url, connectTimeout: connectTimeout, queue: queue)
            return .success(stream)
        case .failure(let failure):
            return .failure(.unsupportedConfiguration("WebSocket needs libcurl on Linux: \(failure)"))
        }
        #elseif canImport(Darwin)
        // Apple platforms: a stream task of URLSession's, read and written by Tern's framing.
        if let refusal = StreamTaskSocketStream.refusal(for: settings) { return .failure(refusal) }
        return .success(StreamTaskSocketStream(url: url, settings: settings, connectTimeout: connectTimeout, queue: queue))
        #else
        return .failure(.unsupportedConfiguration("WebSocket connections are not available on this platform"))
        #endif
    }
}
