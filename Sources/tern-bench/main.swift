import Foundation
import Tern
import TernCache
import TernChildProcess

// tern-bench: the same workloads through Tern and through raw URLSession, in one process, in
// interleaved rounds (A B, B A, …) so that machine drift cancels. Run it with scripts/bench.sh,
// which starts nginx; see the README's Performance section for the figures.

func log(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

let options = Options(Array(CommandLine.arguments.dropFirst()))
let workloads = Workloads(baseURL: options.baseURL)

// Micro mode: Tern's own cost per request over an instant in-process transport.
// Where decoding should leave the transport's thread: a hop against JSON parses (ProcessStage.swift).
if options.microThresholds {
    await Micro.thresholds(count: options.count(20_000))
    exit(0)
}

if options.micro {
    await Micro.run(count: options.count(20_000))
    exit(0)
}

// WebSocket rows: echo rates against the websockets client and a TCP floor, idle memory.
if let ports = options.echoServers {
    log(EchoServers.run(tcpPort: ports.tcp, webSocketPort: ports.webSocket))
    exit(1)
}
if let url = options.webSocketIdleChild {
    await WebSocketBench.idleChild(url, count: options.count ?? 1_000, atOnce: options.openAtOnce)
    exit(0)
}
if let url = options.webSocket {
    let setup = WebSocketBench.Setup(
        url: url, minimalURL: options.minimalWebSocket, tcpPort: options.tcpPort, python: options.python,
        client: options.webSocketClient)
    do {
        try await WebSocketBench.run(setup, rounds: options.rounds, scale: options.scale)
    } catch {
        log("tern-bench --websocket failed: \(error)")
        exit(1)
    }
    exit(0)
}

if options.parsers {
    ParserBench.run(rounds: options.rounds)
    exit(0)
}

// Cache mode: TernCache against NSCache, a locked Dictionary, raw SQLite and plain files.
if options.cache {
    CacheBench.run(rounds: options.rounds, scale: options.scale, only: options.cacheOnly)
    exit(0)
}

// Cache-hit latency: memory hit, disk hit and network round trip, send to callback.
if options.cacheHits {
    CacheHits.run(baseURL: options.baseURL, count: options.count(5_000))
    exit(0)
}

// Request compression: CPU per MB against the gzip tool.
if options.compression {
    CompressionBench.run(rounds: options.rounds, scale: options.scale)
    exit(0)
}

// Outbox: enqueue cost, replay rate against direct sends, memory while replaying.
if options.outbox {
    await OutboxBench.run(
        baseURL: options.baseURL, rounds: options.rounds, scale: options.scale, sinkLog: options.sinkLog, only: options.outboxOnly)
    exit(0)
}

// Streamed upload: 1 GiB produced while it is sent, against the curl tool from a pipe.
if let child = options.streamUploadChild {
    do {
        try await StreamedUpload.child(path: child, baseURL: options.baseURL, size: options.count ?? 1)
    } catch {
        print("failed: \(error)")
    }
    exit(0)
}
if options.streamUpload {
    log("== stream-upload: a body produced while it is sent (chunked, 64 KB pieces) vs curl -T - from a pipe, a child process each")
    do {
        try StreamedUpload.run(baseURL: options.baseURL, rounds: options.rounds, scale: options.scale, json: options.json)
    } catch {
        log("tern-bench --stream-upload failed: \(error)")
        exit(1)
    }
    exit(0)
}

// Download to file: 100 MB through Request.download against URLSession's download task.
if let child = options.downloadFileChild {
    do {
        try await DownloadToFile.child(child, baseURL: options.baseURL, count: options.count ?? 1)
    } catch {
        print("failed: \(error)")
    }
    exit(0)
}
if options.downloadFile {
    log(
        "== download-file-100mb: 100 MB to a file (×\(options.scale < 1 ? 1 : 3) per round), Tern's Request.download vs URLSession's download task, a child process each"
    )
    try DownloadToFile.run(baseURL: options.baseURL, rounds: options.rounds, count: options.scale < 1 ? 1 : 3, json: options.json)
    exit(0)
}

// Variants mode: the sequential workload through several ways of driving URLSession, and Tern.
if options.delivery {
    await DeliveryCost.run(workloads: workloads, scale: options.scale, rounds: options.rounds)
    exit(0)
}

if options.hooks {
    await HookCost.run(workloads: workloads, count: options.count(2_000), rounds: options.rounds)
    exit(0)
}

if options.variants {
    await Variants.run(workloads: workloads, count: options.count(2_000), rounds: options.rounds)
    exit(0)
}

// Child mode: memory per request held in flight (1,000 requests to a 1-byte-per-second URL).
if let child = options.inflightChild {
    let pair = Drivers.sameConfiguration()
    let driver: any Driver =
        switch child {
        case "tern": pair.tern
        case "tern-curl": Drivers.curl()?.tern ?? pair.tern
        // URLSession through a data delegate, as Tern's streamed delivery drives it.
        case "delegate": DelegateSessionDriver(configuration: Drivers.onURLSession().makeSessionConfiguration())
        default: pair.baseline
        }
    let result = await InFlight.measure(driver, baseURL: options.baseURL, count: 1_000)
    print(String(format: "%.3f", result))
    exit(0)
}

// Child mode: one implementation, the 64-in-flight workload, then print peak RSS in MB. The
// "-full" children run the sequential, 64-in-flight and 10 MB workloads one after the other.
if let child = options.rssChild {
    let name = child.replacingOccurrences(of: "-full", with: "")
    let pair = name == "tern-curl" ? Drivers.curl() ?? Drivers.sameConfiguration() : Drivers.sameConfiguration()
    let driver = name.hasPrefix("tern") ? pair.tern : pair.baseline
    var failures = 0
    if child.hasSuffix("-full") { failures += await workloads.sequential(driver, count: options.count(2_000)).failures }
    failures += await workloads.concurrent(driver, count: options.count(20_000), inFlight: 64).failures
    if child.hasSuffix("-full") { failures += await workloads.downloads(driver, count: options.count(20)).failures }
    print(String(format: "%.3f %d", peakRSSMegabytes(), failures))
    exit(0)
}

var entries: [String: Entry] = [:]
var order: [String] = []
var failures: [String: Int] = ["tern": 0, "urlsession": 0]

@MainActor func record(_ workload: String, _ driver: String, _ result: RoundResult, better: [String: String]) {
    failures[driver, default: 0] += result.failures
    for (metric, value) in result.metrics.sorted(by: { $0.key < $1.key }) {
        let key = workload + "/" + metric
        if entries[key] == nil {
            entries[key] = Entry(workload: workload, metric: metric, better: better[metric] ?? "lower")
            order.append(key)
        }
        if driver == "tern" { entries[key]!.tern.append(value) } else { entries[key]!.baseline.append(value) }
    }
}

let higher = ["req_per_s": "higher", "mb_per_s": "higher"]

/// Runs this executable again with `arguments` and returns what it printed.
func runChild(_ arguments: [String]) throws -> String {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = arguments
    return try process.runReadingOutput().trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Runs `body` for both drivers in every round, alternating which goes first.
@MainActor func interleave(
    _ workload: String, _ pair: (tern: any Driver, baseline: any Driver),
    _ body: (any Driver) async -> RoundResult
) async {
    // Warm up both: connections, lazy initialisation.
    _ = await workloads.sequential(pair.tern, count: 50)
    _ = await workloads.sequential(pair.baseline, count: 50)
    for round in 0..<options.rounds {
        let drivers = round.isMultiple(of: 2) ? [pair.tern, pair.baseline] : [pair.baseline, pair.tern]
        var failed: [String] = []
        for driver in drivers {
            let result = await body(driver)
            record(workload, driver.name, result, better: higher)
            if result.failures > 0 { failed.append("\(driver.name) \(result.failures) failed") }
        }
        log("  \(workload): round \(round + 1)/\(options.rounds) done" + (failed.isEmpty ? "" : " — " + failed.joined(separator: ", ")))
    }
}

if let (style, count) = options.profile, let curl = Drivers.curl() {
    let result: RoundResult
    switch style {
    case "chained":
        guard let client = Chained.curlClient() else { exit(1) }
        result = await Chained.tern(client, url: options.baseURL + "/tiny.json", count: count)
    #if os(Linux)
    case "executor":
        result = await withTaskExecutorPreference(curl.tern.taskExecutor) { await workloads.sequential(curl.tern, count: count) }
    #endif
    case "urlsession":
        result = await workloads.sequential(curl.baseline, count: count)
    case "tern-urlsession":
        result = await workloads.sequential(Drivers.sameConfiguration().tern, count: count)
    case "curl-download":
        result = await workloads.downloads(curl.tern, count: count)
    case "curl64":
        guard let wide = Drivers.curl(connectionsPerHost: 64) else { exit(1) }
        result = await workloads.concurrent(wide.tern, count: count, inFlight: 64)
    default:
        result = await workloads.sequential(curl.tern, count: count)
    }
    print(result.metrics)
    exit(0)
}

let same = Drivers.sameConfiguration()
if !options.curlOnly {
    log("== seq: \(options.count(2_000)) sequential GETs of a 2-byte body, same URLSessionConfiguration")
    await interleave("seq", same) { await workloads.sequential($0, count: options.count(2_000)) }
    log("== 64: \(options.count(20_000)) GETs, 64 in flight, same URLSessionConfiguration")
    await interleave("64", same) { await workloads.concurrent($0, count: options.count(20_000), inFlight: 64) }
    log("== download: \(options.count(20)) × 10 MB, same URLSessionConfiguration")
    await interleave("download-10mb", same) { await workloads.downloads($0, count: options.count(20)) }
    let closure = Drivers.closureBaseline()
    log("== seq-closure / 64-closure: the same against URLSession's completion-handler API")
    await interleave("seq-closure", closure) { await workloads.sequential($0, count: options.count(2_000)) }
    await interleave("64-closure", closure) { await workloads.concurrent($0, count: options.count(20_000), inFlight: 64) }
    log("== json-decodable: \(options.count(2_000)) sequential GETs of 1 KB JSON into a Decodable (URLSession: JSONDecoder)")
    await interleave("json-decodable", same) { await workloads.decoded($0, count: options.count(2_000)) }
    log("== seq-defaults: \(options.count(2_000)) sequential GETs, each with its own defaults")
    await interleave("seq-defaults", Drivers.defaults()) { await workloads.sequential($0, count: options.count(2_000)) }
}

if let curl = Drivers.curl(), let wide = Drivers.curl(connectionsPerHost: 64) {
    log("== seq-curl / 64-curl / download-10mb-curl: Tern on its libcurl transport (64-curl: 64 connections for both)")
    await interleave("seq-curl", curl) { await workloads.sequential($0, count: options.count(2_000)) }
    await interleave("64-curl", wide) { await workloads.concurrent($0, count: options.count(20_000), inFlight: 64) }
    await interleave("download-10mb-curl", curl) { await workloads.downloads($0, count: options.count(20)) }
    await interleave("json-decodable-curl", curl) { await workloads.decoded($0, count: options.count(2_000)) }
    #if os(Linux)
    if let executor = curl.tern.taskExecutor {
        log(
            "== seq-curl-executor: \(options.count(2_000)) sequential GETs, Tern's from a task on its libcurl loop (withTaskExecutorPreference(client.taskExecutor))"
        )
        await interleave("seq-curl-executor", curl) { driver in
            guard driver.name == "tern" else { return await workloads.sequential(driver, count: options.count(2_000)) }
            return await withTaskExecutorPreference(executor) { await workloads.sequential(driver, count: options.count(2_000)) }
        }
    }
    #endif
    log("== seq-curl-cli: µs per sequential GET, Tern on libcurl against the curl command-line tool (baseline column)")
    for round in 0..<options.rounds {
        let count = options.count(2_000)
        guard let cli = CurlCommandLine.perRequest(url: options.baseURL + "/tiny.json", count: count) else {
            log("  no curl command-line tool here")
            break
        }
        let tern = await workloads.sequential(curl.tern, count: count)
        let ternFigures = [
            "us_per_req": 1e6 / (tern.metrics["req_per_s"] ?? .nan), "cpu_us_per_req": tern.metrics["cpu_us_per_req"] ?? .nan,
        ]
        record("seq-curl-cli", "tern", RoundResult(metrics: ternFigures, failures: tern.failures), better: higher)
        record(
            "seq-curl-cli", "urlsession",
            RoundResult(
                metrics: ["us_per_req": cli.wallMicroseconds, "cpu_us_per_req": cli.cpuMicroseconds],
                failures: 0), better: higher)
        log("  seq-curl-cli: round \(round + 1)/\(options.rounds) done")
    }
    log("== 64-curl-cli / download-10mb-curl-cli: Tern on libcurl against the curl tool (--parallel-max 64; 10 MB files), baseline column")
    for round in 0..<options.rounds {
        let count = options.count(20_000)
        guard let cli = CurlCommandLine.parallel(url: options.baseURL + "/tiny.json", count: count, inFlight: 64),
            let cliMegabytes = CurlCommandLine.downloads(url: options.baseURL + "/10mb.bin", count: options.count(20), megabytes: 10)
        else { break }
        record("64-curl-cli", "tern", await workloads.concurrent(wide.tern, count: count, inFlight: 64), better: higher)
        record(
            "64-curl-cli", "urlsession",
            RoundResult(metrics: ["req_per_s": cli.perSecond, "cpu_us_per_req": cli.cpuMicroseconds], failures: 0), better: higher)
        record("download-10mb-curl-cli", "tern", await workloads.downloads(curl.tern, count: options.count(20)), better: higher)
        record("download-10mb-curl-cli", "urlsession", RoundResult(metrics: ["mb_per_s": cliMegabytes], failures: 0), better: higher)
        log("  64-curl-cli / download-10mb-curl-cli: round \(round + 1)/\(options.rounds) done")
    }
    if let client = Chained.curlClient() {
        log(
            "== seq-chained-curl: \(options.count(2_000)) sequential GETs, each completion sending the next (Tern's closure API, .immediate, on libcurl; URLSession's completion handler)"
        )
        let session = URLSession(configuration: ClientConfiguration().makeSessionConfiguration())
        let url = options.baseURL + "/tiny.json"
        // The drivers name the sides and warm up this client and this session; the rounds chain.
        await interleave("seq-chained-curl", (TernDriver(client: client), SessionDriver(session: session))) { driver in
            driver.name == "tern"
                ? await Chained.tern(client, url: url, count: options.count(2_000))
                : await Chained.urlSession(session, url: url, count: options.count(2_000))
        }
    }
} else {
    log("== no libcurl transport here (Linux only; see CurlTransport.unavailableReason)")
}

log(
    "== 64-rss: peak RSS of a child process running the 64-in-flight workload; rss-curl: Tern on libcurl against URLSession, each child running seq, 64 in flight and the 10 MB downloads"
)
for round in 0..<options.rounds {
    let children = Drivers.curl() == nil ? ["tern", "urlsession"] : ["tern", "urlsession", "tern-curl-full", "urlsession-full"]
    for name in round.isMultiple(of: 2) ? children : children.reversed() {
        let output = try runChild(["--base-url", options.baseURL, "--rss-child", name] + (options.scale < 1 ? ["--quick"] : []))
        let fields = output.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        let rss = fields.first ?? .nan
        let result = RoundResult(metrics: ["peak_rss_mb": rss], failures: Int(fields.dropFirst().first ?? 1))
        switch name {
        case "tern-curl-full": record("rss-curl", "tern", result, better: higher)
        case "urlsession-full": record("rss-curl", "urlsession", result, better: higher)
        default: record("64-rss", name, result, better: higher)
        }
    }
}

log(
    "== inflight-memory: KB of client memory per request held in flight (1,000 at once, child processes); inflight-1000-curl: Tern on libcurl against the same URLSession figures"
)
for round in 0..<options.rounds {
    let children = Drivers.curl() == nil ? ["tern", "urlsession"] : ["tern", "urlsession", "tern-curl"]
    for name in round.isMultiple(of: 2) ? children : children.reversed() {
        let output = try runChild(["--base-url", options.baseURL, "--inflight-child", name])
        let result = RoundResult(metrics: ["kb_per_request": Double(output) ?? .nan], failures: 0)
        switch name {
        case "tern-curl": record("inflight-1000-curl", "tern", result, better: higher)
        case "urlsession":
            record("inflight-1000", name, result, better: higher)
            if children.contains("tern-curl") { record("inflight-1000-curl", name, result, better: higher) }
        default: record("inflight-1000", name, result, better: higher)
        }
    }
}

let ordered = order.compactMap { entries[$0] }
if options.json {
    print(Report.json(ordered))
} else {
    print(Report.table(ordered))
    let seqCPU = entries["seq/cpu_us_per_req"].map { $0.tern.median - $0.baseline.median } ?? .nan
    print(String(format: "\nadded client CPU per request (seq, median tern − urlsession): %.1f µs", seqCPU))
    print(
        "ratio = tern median / urlsession median; paired = median of per-round ratios; "
            + "better: higher → ratio > 1 favours Tern, lower → ratio < 1 favours Tern")
}
log("failures (non-200 or wrong length): tern \(failures["tern"] ?? 0), urlsession \(failures["urlsession"] ?? 0)")
if failures.values.contains(where: { $0 > 0 }) { exit(1) }
