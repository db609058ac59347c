import Foundation

/// The cache-read stage (per call): what the response cache says before the network.
///
/// A memory hit is decided inline; a disk read runs on a background queue, and a request that
/// stopped running meanwhile (cancelled, timed out) stops there. The plan says how the entry may
/// serve (fresh, stale but allowed, or only once revalidated); then, by the read mode: an entry
/// that may serve answers the request (`cacheElseNetwork`, `cacheOnly`; a stale one within
/// `stale-while-revalidate` starts one background revalidation) or is delivered as a hit before
/// the network attempt (`cacheThenNetwork`); an entry that must be revalidated makes the network
/// attempt conditional (`If-None-Match`, `If-Modified-Since`) when it has a validator.
struct CacheReadStage: Sendable {
    /// What the request does after reading the cache.
    enum Outcome: Sendable {
        /// Send this request (conditional when a stale entry has a validator).
        case network(URLRequest)
        /// The cache answers: a fresh entry, or `.cacheMiss` for `cacheOnly`.
        case answer(Result<RawResponse, TernError>)
        /// Deliver this hit first, then send this request.
        case hitThenNetwork(RawResponse, URLRequest)
    }

    let plan: CachePlan
    /// The request as prepared.
    let request: URLRequest
    let observers: CallObservers

    /// Reads the entry and calls `next` with the outcome: inline for a memory hit, else from a
    /// background queue, and only while `isRunning()` still says so.
    func read(isRunning: @escaping @Sendable () -> Bool, then next: @escaping @Sendable (Outcome) -> Void) {
        if let entry = plan.entry(in: plan.cache.memoryEntry(for:)) {
            if isRunning() { next(outcome(found: entry)) }
        } else {
            DispatchQueue.global(qos: .userInitiated).async {
                guard isRunning() else { return }
                let entry = plan.entryInAnyLevel()
                guard isRunning() else { return }
                next(outcome(found: entry))
            }
        }
    }

    private func outcome(found entry: CachedResponse?) -> Outcome {
        plan.remember(entry)
        let use = entry.map { plan.use(of: $0) } ?? .revalidate
        if let entry { plan.dropIfUseless(entry, use: use) }
        let answer: RawResponse? =
            switch use {
            case .fresh: entry?.raw(.cache)
            case .stale: entry?.raw(.stale)
            case .revalidate: nil
            }
        observers.record(answer.map { .cacheHit($0.source) } ?? .cacheMiss)
        switch plan.readMode {
        case .networkOnly:
            return .network(request)
        case .cacheElseNetwork, .cacheOnly:
            if let answer {
                if case .stale(revalidate: true) = use, plan.readMode == .cacheElseNetwork { plan.revalidateInBackground() }
                return .answer(.success(answer))
            }
            if plan.readMode == .cacheOnly { return .answer(.failure(.cacheMiss(url: request.url))) }
            return .network(plan.conditional(request, on: entry))
        case .cacheThenNetwork:
            let conditional = plan.conditional(request, on: entry)
            guard let answer else { return .network(conditional) }
            return .hitThenNetwork(answer, conditional)
        }
    }
}

extension Call {
    /// Stage 3: asks the cache first; a fresh entry answers, a miss goes on to the first attempt.
    func readCache(_ plan: CachePlan) {
        let stage = CacheReadStage(plan: plan, request: urlRequest, observers: observers)
        stage.read(isRunning: { [self] in !hasEnded }) { [self] outcome in
            switch outcome {
            case .network(let request):
                startAttempt(request, after: 0)
            case .answer(let outcome):
                finish(outcome, attempt: nil)
            case .hitThenNetwork(let hit, let request):
                // The network attempt starts once the hit is delivered: a fast transport could
                // otherwise deliver the final result first (and the hit, arriving late, would be dropped).
                deliverHit(hit) { [self] in startAttempt(request, after: 0) }
            }
        }
    }
}
