import Foundation

/// Per-round figures of one implementation on one workload.
struct RoundResult {
    var metrics: [String: Double]
    var failures: Int
}

/// The workloads, each run once per round per implementation.
struct Workloads {
    let baseURL: String

    /// `count` sequential GETs of the 2-byte body: req/s, p50 and p99 latency, CPU per request.
    func sequential(_ driver: any Driver, count: Int) async -> RoundResult {
        let url = baseURL + "/tiny.json"
        var latencies: [Double] = []
        latencies.reserveCapacity(count)
        var failures = 0
        let cpuStart = cpuSeconds()
        let start = now()
        for _ in 0..<count {
            let began = now()
            let outcome = await driver.get(url)
            latencies.append(now() - began)
            if outcome.status != 200 || outcome.length != 2 { failures += 1 }
        }
        let elapsed = now() - start
        let cpu = cpuSeconds() - cpuStart
        return RoundResult(
            metrics: [
                "req_per_s": Double(count) / elapsed,
                "p50_us": latencies.percentile(50) * 1e6,
                "p99_us": latencies.percentile(99) * 1e6,
                "cpu_us_per_req": cpu / Double(count) * 1e6,
            ], failures: failures)
    }

    /// `count` sequential GETs of the 1 KB JSON document, each decoded into `Feed` (16 items):
    /// req/s and CPU per request, the decoding included.
    func decoded(_ driver: any Driver, count: Int) async -> RoundResult {
        let url = baseURL + "/1k.json"
        var failures = 0
        let cpuStart = cpuSeconds()
        let start = now()
        for _ in 0..<count {
            let outcome = await driver.getDecoded(url)
            if outcome.status != 200 || outcome.length != 16 { failures += 1 }
        }
        let elapsed = now() - start
        let cpu = cpuSeconds() - cpuStart
        return RoundResult(
            metrics: ["req_per_s": Double(count) / elapsed, "cpu_us_per_req": cpu / Double(count) * 1e6], failures: failures)
    }

    /// `count` GETs of the 2-byte body with `inFlight` requests outstanding at all times.
    func concurrent(_ driver: any Driver, count: Int, inFlight: Int) async -> RoundResult {
        let url = baseURL + "/tiny.json"
        let cpuStart = cpuSeconds()
        let start = now()
        let failures = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<inFlight {
                let share = count / inFlight + (worker < count % inFlight ? 1 : 0)
                group.addTask {
                    var failed = 0
                    for _ in 0..<share {
                        let outcome = await driver.get(url)
                        if outcome.status != 200 || outcome.length != 2 { failed += 1 }
                    }
                    return failed
                }
            }
            return await group.reduce(0, +)
        }
        let elapsed = now() - start
        let cpu = cpuSeconds() - cpuStart
        return RoundResult(
            metrics: [
                "req_per_s": Double(count) / elapsed,
                "cpu_us_per_req": cpu / Double(count) * 1e6,
            ], failures: failures)
    }

    /// `count` sequential downloads of the 10 MB file: MB/s.
    func downloads(_ driver: any Driver, count: Int) async -> RoundResult {
        let url = baseURL + "/10mb.bin"
        var failures = 0
        let start = now()
        for _ in 0..<count {
            let outcome = await driver.get(url)
            if outcome.status != 200 || outcome.length != 10_485_760 { failures += 1 }
        }
        let elapsed = now() - start
        return RoundResult(metrics: ["mb_per_s": Double(count) * 10 / elapsed], failures: failures)
    }
}
