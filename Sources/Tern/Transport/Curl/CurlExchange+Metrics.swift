#if canImport(Glibc) || canImport(Musl)
import Foundation

extension CurlExchange {
    /// What libcurl measured of the finished transfer on `easy` to `origin`, which received
    /// `bytesReceived` bytes of (decoded) body.
    static func metrics(_ easy: LibCurl.Handle, curl: LibCurl, origin: String, bytesReceived: Int) -> Metrics {
        func seconds(_ info: LibCurl.Info) -> TimeInterval { Double(curl.info(easy, long: info)) / 1e6 }
        let version: String? =
            switch curl.info(easy, long: .httpVersion) {
            case 1: "HTTP/1.0"
            case 2: "HTTP/1.1"
            case 3: "HTTP/2"
            case 30: "HTTP/3"
            default: nil
            }
        // Each moment includes the ones before (a reused connection reports 0 to connect after a
        // non-zero name lookup).
        let lookup = seconds(.nameLookupTimeT)
        let connect = max(lookup, seconds(.connectTimeT))
        let secure = origin.hasPrefix("https:") ? max(connect, seconds(.appConnectTimeT)) : nil
        let firstByte = max(secure ?? connect, seconds(.startTransferTimeT))
        return Metrics(
            measuredBy: .transport, nameLookup: lookup, connect: connect,
            secureConnect: secure, firstByte: firstByte, total: max(firstByte, seconds(.totalTimeT)),
            reusedConnection: curl.info(easy, long: .numConnects) == 0, httpVersion: version,
            bytesSent: Int64(curl.info(easy, long: .sizeUploadT)), bytesReceived: Int64(bytesReceived))
    }
}
#endif
