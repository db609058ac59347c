import Foundation

/// The exchange stage (per exchange): attempt *n* meets the transport.
///
/// The offline policy comes first (fail at once, or wait for the network); then the transfer's
/// files take part (`TransferStage.swift`); then one exchange starts through the client's
/// `SharingTransport`: alone, or as a member of an identical shared one (`RepeatStrategy.share`).
/// Either way its events feed a fresh `Attempt`, which hands the call one outcome when the
/// exchange completes.
extension Call {
    /// Sends `urlRequest` as the attempt of `route` through the transport, alone or sharing an
    /// identical exchange.
    func send(_ urlRequest: URLRequest, attempt route: Route) {
        let number = route.attempt
        if let network = client.configuration.networkMonitor, client.configuration.offlineBehavior != .send,
            !network.status.isReachable
        {
            return sendOffline(urlRequest, attempt: route, network: network)
        }
        // Files take part here: where a download resumes from, a body on disk (TransferStage.swift).
        guard let (sent, exchange) = exchange(for: observers.willSend(urlRequest), attempt: route) else { return }
        observers.record(.attemptStarted(attempt: number, request: sent))
        let attempt = Attempt(route, sending: urlRequest, exchange: exchange, call: self)
        let identity = sharedIdentity(of: sent)
        guard let task = client.exchanges.start(exchange, for: id, sharing: identity, events: { attempt.receive($0) }) else {
            return fail(.clientInvalidated)  // the transport was invalidated after `send` checked
        }
        attach(task, attempt: number)
    }

    /// What an exchange of `sent` may share an identical one by: its identity under
    /// `RepeatStrategy.share`; every header of it when it revalidates a cache entry (requests
    /// revalidating the same entry make one exchange); nil when it goes alone.
    private func sharedIdentity(of sent: URLRequest) -> RequestIdentity? {
        guard !movesFiles else { return nil }
        if plan?.isRevalidating == true {
            return RequestIdentity(sent, naming: Set((sent.allHTTPHeaderFields ?? [:]).keys).union(options.identityHeaders))
        }
        return options.repeatStrategy == .share ? RequestIdentity(sent, naming: options.identityHeaders) : nil
    }

    /// The attempt of `route` meets an offline device: fails at once, or waits for the network.
    private func sendOffline(_ urlRequest: URLRequest, attempt route: Route, network: NetworkMonitor) {
        switch client.configuration.offlineBehavior {
        case .failFast, .send:
            let attempt = Attempt(route, sending: urlRequest, exchange: TransportRequest(urlRequest), call: self)
            attemptFinished(attempt, .failure(URLError(.notConnectedToInternet)))
        case .waitForConnectivity:
            network.whenReachable { [self] in
                // Still this attempt's turn (not cancelled or timed out meanwhile)?
                if adapted(urlRequest, attempt: route.attempt) { send(urlRequest, attempt: route) }
            }
        }
    }

    /// Tells the observers how attempt `attempt` ended; an attempt of a request that already
    /// ended (cancelled, timed out) is not news.
    func report(_ outcome: Result<RawResponse, URLError>, of attempt: Attempt<Value>) {
        guard observers.wantEvents, !hasEnded else { return }
        switch outcome {
        case .success(let raw): observers.record(.responseReceived(attempt: attempt.number, response: raw.response, bytes: raw.data.count))
        case .failure(let error): observers.record(.attemptFailed(attempt: attempt.number, error: transportError(error)))
        }
    }

    /// The error a transport failure becomes.
    func transportError(_ error: URLError) -> TernError {
        if let host = error.userInfo[TLSFailure.pinnedHostKey] as? String { return .pinningFailed(host: host) }
        if error.userInfo[SharedExchange.refusedKey] != nil { return .clientInvalidated }
        if let failure = error.userInfo[TransportRequest.failureKey] as? TernError { return failure }
        return switch error.code {
        case .timedOut: .timedOut(after: options.timeout)
        case .cancelled: .cancelled(client.isInvalidated ? .clientInvalidated : .explicit)
        case .dataLengthExceedsMaximum: options.sizeLimit.map { .responseTooLarge(limit: $0) } ?? .transport(error)
        default: .transport(error)
        }
    }
}
