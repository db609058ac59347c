import Foundation

/// The prepare and admit stages (per call, inside `send`): the request is resolved and built —
/// every option once (`CallOptions`), the `URLRequest` with every header Tern adds
/// (`RequestBuilder`), the identity repeat strategies compare — then admitted to the client's
/// registry, which applies the repeat strategy, and its clocks start (idle timeout, deadline). A request that cannot
/// be built ends here, with its error delivered after `send` returns.
extension Call {
    /// Prepares `request`, then admits and starts it (stages 1–4); returns its handle.
    static func start(
        _ request: Request<Value>, on client: Client, queue: CallbackQueue, progressQueue: CallbackQueue,
        alwaysReport: Bool, cacheHit: CacheHit?, completion: @escaping Completion
    ) -> RequestHandle {
        let started = (date: Date(), uptime: DispatchTime.now().uptimeNanoseconds)
        let options = CallOptions(request, client: client, alwaysReportsCancellation: alwaysReport)
        let hooks = HookChain(request: request, settings: options.settings, client: client)
        let tags = options.tags
        let urlRequest: URLRequest
        let upload: RequestBodySource?
        let download = request.download.map(DownloadSession.init)
        do {
            if let problem = client.configurationError { throw problem }
            // Parameter and URL hooks run here: every later stage sees the rewritten request.
            (urlRequest, upload) = try RequestBuilder.prepare(request, options: options, hooks: hooks)
            guard !client.isInvalidated else { throw TernError.clientInvalidated }
            try download?.checkDestination()
        } catch {
            let lifecycle = RequestLifecycle(method: request.method, url: nil, tags: tags, lifetime: request.lifetime)
            return failedInsideSend(lifecycle, error as? TernError ?? .clientInvalidated, queue: queue, completion: completion)
        }
        let strategy = options.repeatStrategy
        let progress = ProgressReporter.forRequest(request, queue: progressQueue)
        var identity =
            strategy == .allow
            ? nil
            : RequestIdentity(for: request, urlRequest, strategy: strategy, naming: client.configuration.identityHeaders)
        // A body on disk is not compared: an upload is never identical to another one.
        if upload != nil, request.repeatKey == nil, identity != nil { identity = .unique() }
        let call = Call(
            request, urlRequest, client: client, options: options, hooks: hooks, identity: identity, progress: progress,
            queue: queue, started: started, destination: destination(of: request, download, options: options, queue: queue),
            requestBody: upload, cacheHit: cacheHit, completion: completion)
        // Only the caller holds the handle, unless the lifetime says the engine owns it.
        let handle = call.makeHandle()
        call.admit(retaining: call.retainsHandle ? handle : nil)
        return handle
    }

    /// Where the response of `request` goes: a download's file, a streaming reader, or memory.
    private static func destination(
        of request: Request<Value>, _ download: DownloadSession?, options: CallOptions, queue: CallbackQueue
    ) -> ResponseDestination {
        if let download { return .file(download) }
        guard let handler = request.chunkHandler else { return .memory }
        let chunkQueue = request.readsChunksOnArrival ? .immediate : queue
        return .chunks(ChunkSink(handler: handler, queue: chunkQueue, validation: options.validation, method: request.method))
    }

    /// Enters the client's registry under the repeat strategy, arms the deadline, and goes on to
    /// the cache or the first attempt; `send` returns after this. `handle`: the one the engine
    /// keeps alive until the end.
    func admit(retaining handle: RequestHandle?) {
        begin(retaining: handle)
        observers.record(.created(urlRequest))
        switch client.admit(self, strategy: options.repeatStrategy) {
        case .duplicate:
            cancel(.duplicate)
        case .run(let superseded):
            superseded.forEach { $0.cancel(.superseded) }
            start(idle: options.timeout, attemptLimit: options.retryPolicy.attemptTimeout, deadline: options.deadline) {
                [weak client] lifecycle in client?.leave(lifecycle)
            }
            if let plan, plan.reads {
                readCache(plan)  // stage 3, then stage 4 on a miss or for cache-then-network
            } else {
                startAttempt(urlRequest, after: 0)
            }
        }
        if lifetime.kind == .owner { OwnerWatcher.shared.watch(self) }
        markSent()
    }
}
