import Foundation

/// The transfer stage (per exchange, inside the exchange stage): what each attempt's exchange
/// reads its body from and writes its response to — a download's partial file and the offset it
/// resumes from, a body on disk (a large multipart form is written to its temporary file before
/// the first attempt, off the caller's thread: `send` must return at once), a streamed response.
extension Call {
    /// The request and exchange of `urlRequest` as the attempt of `route`; nil when a multipart
    /// form must first be written to disk (the attempt is sent once it is).
    func exchange(for urlRequest: URLRequest, attempt route: Route) -> (URLRequest, TransportRequest)? {
        var urlRequest = urlRequest
        // A streamed body (`onChunk`, `ByteStream`) is limited like a kept one: its total bytes,
        // unless the request lifts the limit (`maximumResponseSize = Int.max`).
        // Each attempt of a download (a retry too) resumes from what is on disk now.
        let target = destination.forExchange(of: &urlRequest, limit: options.sizeLimit)
        var exchange = TransportRequest(urlRequest, destination: target, streamsBody: progress != nil || destination.streams)
        exchange.upgrade = options.upgrade
        // A body from a file goes with every attempt that keeps the method (a retry, a 307/308);
        // a produced body, with each that can produce it again.
        if let requestBody, urlRequest.httpMethod == self.urlRequest.httpMethod {
            switch requestBody.body(forAttemptAfter: route.redirects) {
            case .ready(let body):
                exchange.body = body
            case .mustPrepare:
                prepareBody(requestBody, then: urlRequest, attempt: route)
                return nil
            case .failed(let failure):
                fail(.requestBodyFailed(failure), attempt: route.attempt)
                return nil
            }
        }
        return (urlRequest, exchange)
    }

    /// Whether the request reads or writes files or streams its response: then it never shares
    /// an exchange with identical requests (`.share`).
    var movesFiles: Bool { destination.leavesMemory || requestBody != nil }

    /// Writes a large multipart form to its temporary file off this thread (the first attempt
    /// starts inside `send`), then sends the attempt of `route` unless the request ended meanwhile.
    func prepareBody(_ body: RequestBodySource, then urlRequest: URLRequest, attempt route: Route) {
        Self.processingQueue.async { [self] in
            if let error = Result(catching: { () throws(TernError) in try body.prepare() }).failure {
                return fail(error, attempt: route.attempt)
            }
            if adapted(urlRequest, attempt: route.attempt) { send(urlRequest, attempt: route) }
        }
    }
}
