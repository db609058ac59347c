import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Tern

/// URLSession driven through a session-level data delegate (what Tern's transport does), without Tern.
// Sendable: `pending` is only touched under `lock`.
final class DelegateSessionDriver: NSObject, Driver, URLSessionDataDelegate, @unchecked Sendable {
    let name = "urlsession-delegate"
    private let lock = NSLock()
    /// Per task: who waits, the body so far, and whether the body is decoded into `Feed`.
    private var pending: [Int: (CheckedContinuation<Outcome, Never>, Data, decodes: Bool)] = [:]
    private var session: URLSession!

    init(configuration: URLSessionConfiguration) {
        super.init()
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: queue)
    }

    func get(_ url: String) async -> Outcome { await get(url, decodes: false) }

    func getDecoded(_ url: String) async -> Outcome { await get(url, decodes: true) }

    private func get(_ url: String, decodes: Bool) async -> Outcome {
        guard let url = URL(string: url) else { return .failed }
        return await withCheckedContinuation { continuation in
            let task = session.dataTask(with: URLRequest(url: url))
            lock.withLock { pending[task.taskIdentifier] = (continuation, Data(), decodes) }
            task.resume()
        }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        lock.withLock { pending[dataTask.taskIdentifier]?.1.append(data) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard let (continuation, data, decodes) = lock.withLock({ pending.removeValue(forKey: task.taskIdentifier) }) else { return }
        let status = (task.response as? HTTPURLResponse)?.statusCode ?? -1
        continuation.resume(returning: error == nil ? Outcome(status: status, body: data, decodes: decodes) : .failed)
    }
}

/// `--variants`: where the cost goes — the same sequential workload through URLSession's async
/// API, its completion handler, a session-level delegate, and Tern; CPU µs per request, medians.
enum Variants {
    static func run(workloads: Workloads, count: Int, rounds: Int) async {
        let configuration = ClientConfiguration()
        let drivers: [any Driver] = [
            SessionDriver(session: URLSession(configuration: configuration.makeSessionConfiguration())),
            ClosureSessionDriver(session: URLSession(configuration: configuration.makeSessionConfiguration())),
            DelegateSessionDriver(configuration: configuration.makeSessionConfiguration()),
            TernDriver(client: Client(configuration: Drivers.onURLSession())),
            TernDriver(
                name: "tern-streamed",
                client: Client(configuration: Drivers.onURLSession { $0.transportSettings.urlSession.delivery = .streamed })),
        ]
        let (cpu, rate) = await interleaved(drivers, workloads: workloads, count: count, rounds: rounds)
        for driver in drivers {
            print(
                String(
                    format: "%-22@ %7.1f µs CPU/req  %7.0f req/s", driver.name as NSString,
                    cpu[driver.name]!.median, rate[driver.name]!.median))
        }
    }

    /// The sequential workload through each driver, rounds interleaved (alternating order):
    /// CPU µs per request and requests per second of every round, by driver name.
    static func interleaved(
        _ drivers: [any Driver], workloads: Workloads, count: Int, rounds: Int
    ) async
        -> (cpu: [String: [Double]], rate: [String: [Double]])
    {
        var cpu: [String: [Double]] = [:]
        var rate: [String: [Double]] = [:]
        for driver in drivers { _ = await workloads.sequential(driver, count: 50) }
        for round in 0..<rounds {
            for driver in round.isMultiple(of: 2) ? drivers : drivers.reversed() {
                let result = await workloads.sequential(driver, count: count)
                cpu[driver.name, default: []].append(result.metrics["cpu_us_per_req"] ?? .nan)
                rate[driver.name, default: []].append(result.metrics["req_per_s"] ?? .nan)
            }
        }
        return (cpu, rate)
    }
}

/// `--hooks`: what hooks cost — the same sequential workload through a client without hooks, with
/// one parameter hook, and with one async adapter; interleaved rounds, CPU µs per request and
/// requests per second, medians.
enum HookCost {
    static func run(workloads: Workloads, count: Int, rounds: Int) async {
        let drivers: [any Driver] = [
            TernDriver(name: "tern (no hooks)", client: Client(configuration: ClientConfiguration())),
            TernDriver(
                name: "tern + parameter hook",
                client: Client(baseURL: nil) { configuration in
                    configuration.hooks.rewriteParameters { $0.query["device_id"] = "bench" }
                }),
            TernDriver(
                name: "tern + async adapter",
                client: Client(baseURL: nil) { configuration in
                    configuration.hooks.adapt { request, _ in
                        var request = request
                        request.setValue("bench", forHTTPHeaderField: "X-Device")
                        return request
                    }
                }),
        ]
        let (cpu, rate) = await Variants.interleaved(drivers, workloads: workloads, count: count, rounds: rounds)
        let plain = cpu[drivers[0].name]!.median
        for driver in drivers {
            let median = cpu[driver.name]!.median
            print(
                String(
                    format: "%-24@ %7.1f µs CPU/req (%+6.1f)  %7.0f req/s", driver.name as NSString, median, median - plain,
                    rate[driver.name]!.median))
        }
    }
}

/// `--delivery`: Tern with URLSession's buffered (completion handler) and streamed (delegate)
/// delivery, interleaved: sequential tiny GETs, 64 in flight, and 10 MB downloads; medians.
enum DeliveryCost {
    static func run(workloads: Workloads, scale: Double, rounds: Int) async {
        let drivers: [any Driver] = [
            TernDriver(
                name: "buffered",
                client: Client(configuration: Drivers.onURLSession { $0.transportSettings.urlSession.delivery = .buffered })),
            TernDriver(
                name: "streamed",
                client: Client(configuration: Drivers.onURLSession { $0.transportSettings.urlSession.delivery = .streamed })),
            SessionDriver(session: URLSession(configuration: Drivers.onURLSession().makeSessionConfiguration())),
        ]
        var figures: [String: [Double]] = [:]
        for driver in drivers { _ = await workloads.sequential(driver, count: 50) }
        for round in 0..<rounds {
            for driver in round.isMultiple(of: 2) ? drivers : drivers.reversed() {
                let seq = await workloads.sequential(driver, count: Int(2_000 * scale))
                let wide = await workloads.concurrent(driver, count: Int(20_000 * scale), inFlight: 64)
                let download = await workloads.downloads(driver, count: 20)
                figures["\(driver.name) seq req/s", default: []].append(seq.metrics["req_per_s"] ?? .nan)
                figures["\(driver.name) seq cpu µs", default: []].append(seq.metrics["cpu_us_per_req"] ?? .nan)
                figures["\(driver.name) 64 req/s", default: []].append(wide.metrics["req_per_s"] ?? .nan)
                figures["\(driver.name) download MB/s", default: []].append(download.metrics["mb_per_s"] ?? .nan)
            }
        }
        for name in figures.keys.sorted() {
            print(String(format: "%-28@ %9.1f", name as NSString, figures[name]!.median))
        }
    }
}
