import Foundation

/// Stage 3: reading the cache before the network.
///
/// A memory hit is handled inline; a disk read runs on a background queue, and a request
/// cancelled meanwhile stops there. Then, by the policy's read mode: a fresh entry ends the
/// request (`cacheElseNetwork`, `cacheOnly`), or is delivered as a cache hit before the network
/// attempt (`cacheThenNetwork`); a stale entry with a validator makes the network attempt
/// conditional (`If-None-Match`, `If-Modified-Since`).
extension Call {
    func readCache(_ plan: CachePlan) {
        if let entry = plan.cache.memoryEntry(for: plan.key) {
            proceed(after: plan, found: entry)
        } else {
            DispatchQueue.global(qos: .userInitiated).async { [self] in
                guard core.isRunning else { return }
                proceed(after: plan, found: plan.cache.diskEntry(for: plan.key))
            }
        }
    }

    private func proceed(after plan: CachePlan, found entry: CachedResponse?) {
        guard core.isRunning else { return }
        plan.remember(entry)
        if let entry { plan.dropIfUseless(entry) }
        let fresh = entry.flatMap { $0.isFresh(maxAge: plan.policy.maxAge) ? $0.raw(.cache) : nil }
        monitor?.send(fresh == nil ? .cacheMiss : .cacheHit(.cache))
        switch plan.policy.read {
        case .networkOnly:
            startAttempt(urlRequest, after: 0)
        case .cacheElseNetwork, .cacheOnly:
            if let fresh {
                finish(.success(fresh), attempt: nil)
            } else if plan.policy.read == .cacheOnly {
                finish(.failure(.cacheMiss(url: urlRequest.url)), attempt: nil)
            } else {
                startNetworkAttempt(plan.conditional(urlRequest, on: entry))
            }
        case .cacheThenNetwork:
            let conditional = plan.conditional(urlRequest, on: entry)
            guard let fresh else { return startNetworkAttempt(conditional) }
            // The network attempt starts once the hit is delivered: a fast transport could
            // otherwise deliver the final result first (and the hit, arriving late, would be dropped).
            deliverHit(fresh) { [self] in startNetworkAttempt(conditional) }
        }
    }

    private func startNetworkAttempt(_ request: URLRequest) {
        startAttempt(request, after: 0)
    }

    /// Delivers a cache-then-network hit, decoded with the request's serializer, on the callback
    /// queue: never inside `send`, never after the request finished or was cancelled; then runs
    /// `next` (at once when there is no hit to deliver).
    private func deliverHit(_ raw: RawResponse, then next: @escaping @Sendable () -> Void) {
        guard let cacheHit, let value = try? serializer.value(from: raw.data, head: raw.head, method: core.method)
        else { return next() }
        let response = makeResponse(raw, value: value, route: nil)
        let run = core.isInsideSend ? queue.performLater : queue.perform
        let handle = retainedHandle
        run { [self] in
            if core.phase != .finished, core.isListenedTo { cacheHit(handle ?? core.handle, response) }
            next()
        }
    }
}
