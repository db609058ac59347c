import Foundation

/// The exchange stage (per exchange): attempt *n* meets the transport.
///
/// The offline policy comes first (fail at once, or wait for the network); then the transfer's
/// files take part (`TransferStage.swift`); then one exchange starts, alone on the transport or
/// as a member of an identical shared one (`RepeatStrategy.share`). Its events feed a fresh
/// `Attempt`, which hands the call one outcome when the exchange completes.
extension Call {
    /// Sends attempt `number` through the transport, or joins an identical shared exchange.
    func send(_ urlRequest: URLRequest, attempt number: Int) {
        if let network = client.configuration.networkMonitor, client.configuration.offlineBehavior != .send,
            !network.status.isReachable
        {
            return sendOffline(urlRequest, attempt: number, network: network)
        }
        // Files take part here: where a download resumes from, a body on disk (TransferStage.swift).
        guard let (urlRequest, exchange) = exchange(for: urlRequest, attempt: number) else { return }
        monitor?.send(.attemptStarted(attempt: number, request: urlRequest))
        let attempt = Attempt(number: number, sending: exchange, call: self)
        if strategy == .share, !movesFiles,
            let membership = client.join(
                attempt.member, sending: exchange, of: core.id, sharing: RequestIdentity(urlRequest, naming: identityHeaders))
        {
            core.attach(membership, attempt: number)
        } else if let task = client.startExchange(exchange, events: { attempt.receive($0) }) {
            core.attach(task, attempt: number)
        } else {
            // The transport was invalidated after `send` checked.
            core.fail(.clientInvalidated)
        }
    }

    /// Attempt `number` meets an offline device: fails at once, or waits for the network.
    private func sendOffline(_ urlRequest: URLRequest, attempt number: Int, network: NetworkMonitor) {
        switch client.configuration.offlineBehavior {
        case .failFast, .send:
            let attempt = Attempt(number: number, sending: TransportRequest(urlRequest), call: self)
            attemptFinished(attempt, .failure(URLError(.notConnectedToInternet)))
        case .waitForConnectivity:
            network.whenReachable { [self] in
                // Still this attempt's turn (not cancelled or timed out meanwhile)?
                if core.adapted(urlRequest, attempt: number) { send(urlRequest, attempt: number) }
            }
        }
    }

    /// The error a transport failure becomes.
    func transportError(_ error: URLError) -> TernError {
        if let host = error.userInfo[TLSFailure.pinnedHostKey] as? String { return .pinningFailed(host: host) }
        return switch error.code {
        case .timedOut: .timedOut(after: timeout)
        case .cancelled: .cancelled(client.isInvalidated ? .clientInvalidated : .explicit)
        case .dataLengthExceedsMaximum: sizeLimit.map { .responseTooLarge(limit: $0) } ?? .transport(error)
        default: .transport(error)
        }
    }
}
