import Foundation
import Tern

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `seq-chained`: sequential GETs where each completion handler sends the next request, on the
/// thread it runs on — the closure style with `callbackQueue = .immediate` on Tern's side, a
/// completion-handler data task on URLSession's. No async task to resume between requests.
enum Chained {
    /// Counts down the requests of one run and checks each response.
    // Sendable: each request's completion starts the next, so one thread at a time touches it.
    private final class Chain: @unchecked Sendable {
        var remaining: Int
        var failures = 0
        let done: CheckedContinuation<Void, Never>
        init(count: Int, done: CheckedContinuation<Void, Never>) {
            remaining = count
            self.done = done
        }
        /// Records one response; whether to send another.
        func record(status: Int, length: Int) -> Bool {
            if status != 200 || length != 2 { failures += 1 }
            remaining -= 1
            if remaining == 0 { done.resume() }
            return remaining > 0
        }
    }

    /// A client on the libcurl transport that calls completions on the transport's thread; nil
    /// where there is no libcurl transport.
    static func curlClient() -> Client? {
        #if os(Linux)
        var configuration = ClientConfiguration()
        configuration.callbackQueue = .immediate
        guard let transport = CurlTransport.make(configuration: configuration) else { return nil }
        configuration.transport = transport
        return Client(configuration: configuration)
        #else
        return nil
        #endif
    }

    /// Tern, closure style, completions on the transport's thread.
    static func tern(_ client: Client, url: String, count: Int) async -> RoundResult {
        await measure(count: count) { chain in
            @Sendable func next() {
                client.send(Request<Data>(url)) { result in
                    let response = try? result.get()
                    if chain.record(status: response?.statusCode ?? -1, length: response?.data.count ?? -1) { next() }
                }
            }
            next()
        }
    }

    /// URLSession, completion-handler data tasks.
    static func urlSession(_ session: URLSession, url: String, count: Int) async -> RoundResult {
        guard let target = URL(string: url) else { return RoundResult(metrics: [:], failures: count) }
        return await measure(count: count) { chain in
            @Sendable func next() {
                session.dataTask(with: target) { data, response, _ in
                    if chain.record(status: (response as? HTTPURLResponse)?.statusCode ?? -1, length: data?.count ?? -1) { next() }
                }.resume()
            }
            next()
        }
    }

    private static func measure(count: Int, _ start: @escaping (Chain) -> Void) async -> RoundResult {
        let cpuStart = cpuSeconds()
        let began = now()
        var chain: Chain?
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let made = Chain(count: count, done: done)
            chain = made
            start(made)
        }
        let elapsed = now() - began
        return RoundResult(
            metrics: ["req_per_s": Double(count) / elapsed, "cpu_us_per_req": (cpuSeconds() - cpuStart) / Double(count) * 1e6],
            failures: chain?.failures ?? count)
    }
}
