import Foundation

/// How far a request's upload or download has come, as reported to `Request.progress`.
/// Thread safety: a value type, safe to share.
public struct TransferProgress: Sendable, Equatable {
    /// Which way the bytes move.
    public enum Direction: Sendable, Equatable {
        /// The request body going to the server.
        case upload
        /// The response body coming back.
        case download
    }

    /// Which way the bytes move.
    public var direction: Direction
    /// Bytes transferred so far (for downloads: of the decompressed body).
    public var completedBytes: Int64
    /// The total, when known: the body's size for uploads, `Content-Length` for downloads.
    /// Nil for chunked responses, and for compressed ones, whose `Content-Length` counts other bytes.
    public var expectedBytes: Int64?

    /// Creates a progress value.
    public init(direction: Direction, completedBytes: Int64, expectedBytes: Int64?) {
        self.direction = direction
        self.completedBytes = completedBytes
        self.expectedBytes = expectedBytes
    }

    /// `completedBytes / expectedBytes` clamped to 0...1, or nil when the total is unknown.
    public var fractionCompleted: Double? {
        guard let expectedBytes, expectedBytes > 0 else { return nil }
        return min(1, max(0, Double(completedBytes) / Double(expectedBytes)))
    }
}
