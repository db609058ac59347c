import Foundation

/// A `RequestDelegate` that also follows transfers: progress, and the chunks (and server-sent
/// events) of a streamed response. Every method has a default that does nothing.
/// Thread safety: Tern calls a delegate only on the request's callback queue.
public protocol TransferDelegate: RequestDelegate {
    /// Upload or download progress (see `Request.progress`); any request sent with this delegate.
    func request(_ request: RequestHandle, didUpdate progress: TransferProgress)
    /// A chunk of a body streamed with `Client.stream(_:delegate:queue:)`, in order.
    func request(_ request: RequestHandle, didReceive chunk: Data)
    /// An event of a streamed `text/event-stream` response, after the chunk that completed it.
    func request(_ request: RequestHandle, didReceive event: ServerSentEvent)
}

extension TransferDelegate {
    /// Does nothing.
    public func request(_ request: RequestHandle, didUpdate progress: TransferProgress) {}
    /// Does nothing.
    public func request(_ request: RequestHandle, didReceive chunk: Data) {}
    /// Does nothing.
    public func request(_ request: RequestHandle, didReceive event: ServerSentEvent) {}
}

extension Client {
    /// Streams the response body to `onChunk` as it arrives, then calls `completion` once (its
    /// response has an empty body). See `Request.onChunk` for validation, deadline and retries.
    /// - Parameters:
    ///   - convertible: A request (or endpoint) whose value is `Data`.
    ///   - queue: Where `onChunk` and `completion` run; nil uses the request's or client's.
    ///   - onChunk: Each chunk, in order, before the completion.
    ///   - completion: The outcome.
    /// - Returns: A handle that can cancel the stream.
    @discardableResult
    public func stream(
        _ convertible: some RequestConvertible<Data>, queue: CallbackQueue? = nil,
        onChunk: @escaping @Sendable (Data) -> Void,
        completion: @escaping @Sendable (Result<Response<Data>, TernError>) -> Void
    ) -> RequestHandle {
        send(convertible.makeRequest().onChunk(onChunk), queue: queue, completion: completion)
    }

    /// Streams a `text/event-stream` response to `onEvent`, one server-sent event at a time,
    /// then calls `completion` once. The events are parsed as the bytes arrive, so an event over
    /// `ServerSentEvents.defaultMaximumEventSize` ends the stream with `.responseTooLarge` before
    /// more of it is held. See `Request.onChunk` for validation, deadline and retries.
    @discardableResult
    public func events(
        _ convertible: some RequestConvertible<Data>, queue: CallbackQueue? = nil,
        onEvent: @escaping @Sendable (ServerSentEvent) -> Void,
        completion: @escaping @Sendable (Result<Response<Data>, TernError>) -> Void
    ) -> RequestHandle {
        // Chunks reach the parser one at a time, in order, as they arrive: an event over its
        // limit ends the stream before more of it is held. Its events go to the callback queue.
        let parser = Locked(ServerSentEventParser())
        var request = convertible.makeRequest()
        let delivery = queue ?? callbackQueue(for: request)
        request.readsChunksOnArrival = true
        request.chunkHandler = { handle, chunk, _ in
            switch parser.withLock({ parser in Result { () throws(TernError) in try parser.feed(chunk) } }) {
            case .success(let events):
                if !events.isEmpty { delivery.perform { if handle?.lifecycle.hasEnded != true { events.forEach(onEvent) } } }
                return nil
            case .failure(let error):
                return error
            }
        }
        return send(request, queue: queue, completion: completion)
    }

    /// Streams the response body to `delegate` (`request(_:didReceive:)` per chunk, and per
    /// server-sent event when the response is a `text/event-stream`), then its result.
    /// - Parameters:
    ///   - convertible: A request (or endpoint) whose value is `Data`.
    ///   - delegate: Receives chunks, events, progress and the result; not retained.
    ///   - queue: Where the delegate is called; nil uses the request's or client's.
    /// - Returns: A handle that can cancel the stream; the delegate receives it too.
    @discardableResult
    public func stream(
        _ convertible: some RequestConvertible<Data>, delegate: any TransferDelegate,
        queue: CallbackQueue? = nil
    ) -> RequestHandle {
        var request = convertible.makeRequest()
        let box = Weak<AnyObject>(delegate)
        // Parsed as the bytes arrive (an event over its limit ends the stream before more of it is
        // held); each chunk and the events it completes go to the delegate on the callback queue.
        let parser = Locked<ServerSentEventParser?>(nil)
        let delivery = queue ?? callbackQueue(for: request)
        request.readsChunksOnArrival = true
        request.chunkHandler = { handle, chunk, response in
            let events = parser.withLock { parser -> Result<[ServerSentEvent], TernError> in
                if parser == nil, response.mimeType?.lowercased() == "text/event-stream" { parser = ServerSentEventParser() }
                return Result { () throws(TernError) in try parser?.feed(chunk) ?? [] }
            }
            if case .failure(let error) = events { return error }
            delivery.perform {
                guard let handle, !handle.lifecycle.hasEnded, let delegate = box.object as? any TransferDelegate else { return }
                delegate.request(handle, didReceive: chunk)
                for event in (try? events.get()) ?? [] { delegate.request(handle, didReceive: event) }
            }
            return nil
        }
        return send(request, delegate: delegate, queue: queue)
    }

    /// Streams the response body for `await` callers:
    /// ```swift
    /// for try await event in client.stream(Request<Data>("updates")).events { … }
    /// ```
    /// Nothing is sent until the sequence is iterated (see `ByteStream`).
    public func stream(_ convertible: some RequestConvertible<Data>) -> ByteStream {
        ByteStream(client: self, request: convertible.makeRequest())
    }

    /// Starts `convertible` and returns it as a `Transfer`: its progress as an async sequence,
    /// and its response to await.
    /// ```swift
    /// let transfer = client.transfer(.download("maps/radar.png", to: file))
    /// for await progress in transfer.progress { bar.show(progress) }
    /// let file = try await transfer.response.value
    /// ```
    public func transfer<Value>(_ convertible: some RequestConvertible<Value>) -> Transfer<Value> {
        Transfer(client: self, request: convertible.makeRequest())
    }
}
