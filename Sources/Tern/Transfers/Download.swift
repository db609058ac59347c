import Foundation

/// How a download to a file behaves.
/// Thread safety: a value type, safe to share.
public struct DownloadOptions: Sendable, Equatable {
    /// Create the destination's missing folders. Default true.
    public var createsIntermediateDirectories: Bool
    /// Replace a file already at the destination; when false (the default) the download fails
    /// with `TernError.invalidRequest(.destinationExists)` before anything is sent.
    public var replacesExistingFile: Bool
    /// Keep the partial file when the download is cancelled, times out, loses its connection or
    /// its process dies, and continue from it next time (and on a retry) with a `Range` request
    /// validated by `If-Range`. Default false: a failed download leaves nothing behind.
    public var isResumable: Bool
    /// Compute the SHA-256 of the file (`DownloadedFile.sha256`). Default false.
    public var computesChecksum: Bool

    /// Creates options; every default is listed on its property.
    public init(
        createsIntermediateDirectories: Bool = true, replacesExistingFile: Bool = false,
        isResumable: Bool = false, computesChecksum: Bool = false
    ) {
        self.createsIntermediateDirectories = createsIntermediateDirectories
        self.replacesExistingFile = replacesExistingFile
        self.isResumable = isResumable
        self.computesChecksum = computesChecksum
    }
}

/// A file a download request wrote: the value of a `Request<DownloadedFile>`.
/// Thread safety: a value type, safe to share.
public struct DownloadedFile: Sendable, Equatable {
    /// Where the file is now: the destination the request named.
    public let url: URL
    /// The file's size in bytes.
    public let size: Int64
    /// How many bytes were already on disk from an earlier, interrupted run (0 for a fresh download).
    public let resumedFrom: Int64
    /// The file's SHA-256 as 64 lowercase hexadecimal digits, when `computesChecksum` was set.
    public let sha256: String?

    /// Creates a value (for tests and stubs).
    public init(url: URL, size: Int64, resumedFrom: Int64 = 0, sha256: String? = nil) {
        self.url = url
        self.size = size
        self.resumedFrom = resumedFrom
        self.sha256 = sha256
    }
}

/// Where a download request writes, and how.
/// Thread safety: a value type, safe to share.
struct DownloadTarget: Sendable {
    let destination: URL
    let options: DownloadOptions
}

extension Request where Value == DownloadedFile {
    /// A request that streams its response body into a file, never into memory.
    ///
    /// The body goes to a partial file beside `destination` (`<name>.terndownload`), which
    /// becomes the destination with one atomic rename once the whole body has arrived and the
    /// response passed validation. Only a successful (2xx) body is written to disk; an error
    /// status keeps its body for the `TernError`. With `options.isResumable`, an interrupted
    /// download resumes from the partial file (see `DownloadOptions.isResumable`): the server's
    /// `ETag`, else `Last-Modified`, is kept beside it (`<name>.terndownload.resume`), sent back as
    /// `If-Range`, and a server that ignores the range or changed the file starts over cleanly.
    /// Progress (`onProgress`) of a resumed download starts at the bytes already on disk. The
    /// size limit (`maximumResponseSize`) does not apply to the file.
    /// ```swift
    /// let file = try await client.send(.download("maps/radar.png", to: radarURL,
    ///                                            options: DownloadOptions(isResumable: true)))
    /// print(file.value.size, file.value.resumedFrom)
    /// ```
    /// - Parameters:
    ///   - url: An absolute URL, or a path relative to the client's base URL.
    ///   - destination: A file URL; the file appears there only when the download succeeded.
    ///   - options: Folders, replacing, resuming and the checksum.
    ///   - method: The HTTP method; GET by default.
    ///   - query: Query parameters.
    ///   - headers: Headers for this request.
    ///   - timeout: The idle timeout in seconds (no byte for that long fails the attempt); nil uses
    ///     the client's. A large download may take longer in all: `deadline` bounds the whole.
    public static func download(
        _ url: String, to destination: URL, options: DownloadOptions = DownloadOptions(),
        method: HTTPMethod = .get, query: Parameters = [:], headers: [String: String] = [:],
        timeout: TimeInterval? = nil
    ) -> Request<DownloadedFile> {
        var request = Request(url, method: method, query: query, headers: headers, timeout: timeout, serializer: .downloadedFile)
        request.download = DownloadTarget(destination: destination, options: options)
        request.maximumResponseSize = Int.max
        return request
    }
}

extension ResponseSerializer where Value == DownloadedFile {
    /// The file a download wrote; only download requests (`Request.download`) have one.
    static var downloadedFile: ResponseSerializer<DownloadedFile> {
        ResponseSerializer(acceptableContentTypes: nil, emptyValue: nil, kind: .builtIn) { _, response throws(TernError) in
            throw .decoding(description: "no downloaded file for \(response.url?.absoluteString ?? "the response")", body: Data())
        }
    }
}
