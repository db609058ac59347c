import Foundation

extension Client {
    /// The observers of a call of this client: its event monitors, a span of its tracer, its
    /// metrics' tally, each only when the client has it. `upgrade`: the observer of a socket
    /// whose connection the call opens, which tells the socket's monitors and span instead.
    func observers(
        requestID: UInt64, method: HTTPMethod, url: URL?, tags: Set<String>, upgrade: (any CallObserver)?
    ) -> CallObservers {
        let tally = configuration.collectsMetrics ? CallTally(statistics) : nil
        // The common case, no monitors and no tracer: the tally alone, no list.
        if upgrade == nil, configuration.monitors.isEmpty, configuration.tracer == nil { return CallObservers(tally) }
        var observers: [any CallObserver] = []
        if let upgrade {
            observers.append(upgrade)
        } else {
            let monitors = configuration.monitors
            if !monitors.isEmpty {
                observers.append(MonitorSink(monitors: monitors, requestID: requestID, method: method, url: url, tags: tags))
            }
            if let tracer = configuration.tracer {
                let request = TracedRequest(requestID: requestID, method: method, url: url, tags: tags, parent: TraceContext.current)
                observers.append(SpanObserver(tracer, for: request))
            }
        }
        if let tally { observers.append(tally) }
        return CallObservers(observers)
    }
}
