import Foundation

/// Hands a streamed response body to its reader chunk by chunk (`Request.onChunk`,
/// `Client.stream`): on the callback queue, in order, only after the head passed validation,
/// never after the request ended.
/// Thread safety: safe to use from any thread; chunks arrive from one exchange at a time.
final class ChunkSink: Sendable {
    private let handler: @Sendable (RequestHandle?, Data, HTTPURLResponse) -> TernError?
    private let queue: CallbackQueue
    private let validation: ResponseValidation
    private let method: HTTPMethod
    private struct State {
        var delivered = false
        var head: HTTPURLResponse?
    }
    private let state = Locked(State())

    init(
        handler: @escaping @Sendable (RequestHandle?, Data, HTTPURLResponse) -> TernError?, queue: CallbackQueue,
        validation: ResponseValidation,
        method: HTTPMethod
    ) {
        self.handler = handler
        self.queue = queue
        self.validation = validation
        self.method = method
    }

    /// A response head arrived: whether its body is streamed (it passes validation) rather
    /// than kept for the error it becomes (or for the redirect it is).
    func accepts(_ response: HTTPURLResponse) -> Bool {
        state.withLock { $0.head = response }
        do {
            try validation.validate(ResponseHead(response), body: Data(), serializerTypes: nil, method: method.rawValue)
            return true
        } catch {
            return false
        }
    }

    /// A chunk of an accepted body of `request` arrived.
    func receive(_ chunk: Data, of request: RequestLifecycle) {
        guard
            let head = state.withLock({ state -> HTTPURLResponse? in
                state.delivered = true
                return state.head
            })
        else { return }
        queue.perform { [handler] in
            // A cancel or the deadline finished the request: nothing more. (A completion comes
            // after every chunk queued before it, so it never finishes the request early.)
            guard !request.hasEnded else { return }
            // The reader's error (an event over its limit) ends the request.
            if let error = handler(request.handle, chunk, head) { request.fail(error) }
        }
    }

    /// Whether any chunk went to the reader: then the request is never retried.
    var hasDelivered: Bool { state.withLock { $0.delivered } }
}
