import Foundation

/// Stage 4 for bodies on disk: a large multipart form is written to its temporary file before
/// the first attempt, off the caller's thread (`send` must return at once).
extension Call {
    /// Writes a large multipart form to its temporary file off this thread (the first attempt
    /// starts inside `send`), then sends attempt `number` unless the request ended meanwhile.
    func prepareUpload(_ upload: UploadSource, then urlRequest: URLRequest, attempt number: Int) {
        Self.processingQueue.async { [self] in
            if let error = Result(catching: { () throws(TernError) in try upload.prepare() }).failure {
                return core.fail(error, attempt: number)
            }
            if core.adapted(urlRequest, attempt: number) { send(urlRequest, attempt: number) }
        }
    }
}
