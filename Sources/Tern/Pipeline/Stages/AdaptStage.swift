import Foundation

/// The adapt stage (per exchange): the request's, its group's and its client's adapters, in
/// that order, each given what the previous one made of the attempt's request.
///
/// Adapters are `async` (a token refresh may wait on the network), so they run in a `Task`;
/// a request without adapters never comes here. Not run for an attempt that follows a redirect:
/// that request was already adapted.
struct AdaptStage: Sendable {
    let adapters: [any RequestAdapter]

    /// Adapts `request` for attempt `attempt`, then calls `next` with the adapted request, or
    /// with the error of the first adapter that throws (named after it).
    func run(_ request: URLRequest, for attempt: AttemptInfo, then next: @escaping @Sendable (Result<URLRequest, TernError>) -> Void) {
        Task {
            var adapted = request
            for adapter in adapters {
                do {
                    adapted = try await adapter.adapt(adapted, for: attempt)
                } catch {
                    return next(.failure(.fromHook(adapter, error)))
                }
            }
            next(.success(adapted))
        }
    }
}
