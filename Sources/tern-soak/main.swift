import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Tern

// tern-soak: many requests through one client against the fixture server, a mix of redirects
// (301/302/303/307/308, a loop, cross-origin), faults (resets before and inside the body,
// truncated, malformed and mis-typed bodies, broken chunked encoding, stalls, 401 Basic, a 2 GB
// Content-Length against a limit), cached requests in every read mode, repeat strategies and
// plain responses, with random cancels from several threads and short deadlines. Checks that
// the process survives, that every request ends exactly once, that the registry ends empty and
// that the cache left no temporary file; reports the RSS growth (scripts/soak.sh runs it with
// MALLOC_ARENA_MAX=2). `--raw` runs the same mix through a raw URLSession (no
// delegate: with one, cancelling during a redirect crashes FoundationNetworking on Linux).
// Run it with scripts/soak.sh, which starts the fixture server.

struct Options {
    var baseURL = ""
    var count = 100_000
    var inFlight = 64
    var raw = false
    var seed: UInt64 = 2026

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--base-url": baseURL = iterator.next() ?? ""
            case "--count": count = Int(iterator.next() ?? "") ?? count
            case "--in-flight": inFlight = Int(iterator.next() ?? "") ?? inFlight
            case "--seed": seed = UInt64(iterator.next() ?? "") ?? seed
            case "--raw": raw = true
            default:
                FileHandle.standardError.write(
                    Data("usage: tern-soak --base-url URL [--count N] [--in-flight N] [--seed N] [--raw]\n".utf8))
                exit(2)
            }
        }
        if baseURL.isEmpty { FileHandle.standardError.write(Data("tern-soak: --base-url is required\n".utf8)); exit(2) }
    }
}

/// One request of the mix: where it goes, how, and whether it is cancelled or gets a short deadline.
struct Job: Sendable {
    let path: String
    let method: String
    let body: Data?
    let cancelAfter: Double?
    let timeout: Double?
    var strategy: RepeatStrategy = .allow
    var cache: CachePolicy?
    var limit: Int?
}

/// Builds the mix: half plain, a third redirects, the rest faults; every 11th cancelled.
func makeJob(_ index: Int, base: String, random: inout SplitMix) -> Job {
    let crossOrigin = base.replacingOccurrences(of: "127.0.0.1", with: "localhost")
    let roll = random.next(100)
    let path: String
    var method = "GET"
    var body: Data?
    var timeout: Double?
    switch roll {
    case 0..<45: path = "/json?n=\(index % 5)"
    case 45..<51: path = "/redirect?status=301&to=/json"
    case 51..<57: path = "/redirect?status=302&to=/json"
    case 57..<62: path = "/redirect?status=303&to=/echo"; method = "POST"; body = Data("{\"a\":1}".utf8)
    case 62..<69: path = "/redirect?status=307&to=/echo"; method = "POST"; body = Data("{\"soak\":\(index)}".utf8)
    case 69..<74: path = "/redirect?status=308&to=/echo"; method = "PUT"; body = Data("{\"soak\":\(index)}".utf8)
    case 74..<79: path = "/redirect?status=302&to=" + (crossOrigin + "/json").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
    case 79..<81: path = "/redirect-chain?n=3"
    case 81..<82: path = "/redirect-loop?key=soak"
    case 82..<84: path = "/reset"
    case 84..<85: path = "/reset-body"
    case 85..<87: path = "/truncated"
    case 87..<89: path = "/malformed-json"
    case 89..<90: path = "/bad-chunked"
    case 90..<91: path = "/basic-401"
    case 91..<93: path = "/stall?seconds=0.3"; timeout = 0.1
    case 93..<94: path = "/stall-body?seconds=0.3"; timeout = 0.15
    case 94..<95: path = "/drip?chunks=3&interval=0.01"
    default: path = "/cached?key=soak-\(index % 64)&etag=e\(index % 3)"
    }
    if timeout == nil, random.next(20) == 0 { timeout = 0.02 + Double(random.next(100)) / 1000 }
    let cancelAfter = index % 11 == 0 ? Double(random.next(21)) / 1000 : nil
    var job = Job(path: path, method: method, body: body, cancelAfter: cancelAfter, timeout: timeout)
    if roll >= 95 {
        let modes: [CachePolicy.ReadMode] = [.networkOnly, .cacheElseNetwork, .cacheThenNetwork, .cacheOnly]
        let writes: [CachePolicy.Write] = [.memory, .disk, .both]
        job.cache = CachePolicy(read: modes[random.next(modes.count)], write: writes[random.next(writes.count)], maxAge: 0.5)
    }
    if method == "GET", random.next(5) == 0 { job.strategy = [.share, .cancelOlder, .ignoreNewer][random.next(3)] }
    if index % 1_000 == 999 {
        job = Job(path: "/huge?announce=2147483648", method: "GET", body: nil, cancelAfter: nil, timeout: 10, limit: 1 << 20)
    }
    return job
}

/// A small seeded generator, so a failing mix can be replayed.
struct SplitMix {
    var state: UInt64
    mutating func next(_ bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((z ^ (z >> 31)) % UInt64(bound))
    }
}

/// Resident memory in MB, from /proc/self/status (read with getline: procfs reports size 0).
func residentMegabytes() -> Double {
    guard let file = fopen("/proc/self/status", "r") else { return 0 }
    defer { fclose(file) }
    var line: UnsafeMutablePointer<CChar>?
    var capacity = 0
    defer { free(line) }
    while getline(&line, &capacity, file) > 0, let line {
        let text = String(cString: line)
        if text.hasPrefix("VmRSS:") { return (Double(text.split(separator: " ")[1]) ?? 0) / 1024 }
    }
    return 0
}

/// An outcome's kind for the summary: the error case, with the transport's code.
func kind(of error: TernError) -> String {
    switch error {
    case .transport(let underlying): "transport \(underlying.code.rawValue)"
    case .timedOut: "timed out"
    case .cancelled: "cancelled"
    case .unacceptableStatus(let code, _, _, _): "status \(code)"
    default: String("\(error)".prefix { $0 != ":" })
    }
}

func log(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

let options = Options(Array(CommandLine.arguments.dropFirst()))
var random = SplitMix(state: options.seed)
let jobs = (0..<options.count).map { makeJob($0, base: options.baseURL, random: &random) }
let endings = Locked([UInt8](repeating: 0, count: options.count))
let kinds = Locked([String: Int]())
let window = DispatchSemaphore(value: options.inFlight)
let callbacks = DispatchQueue(label: "soak.callbacks", attributes: .concurrent)
let cancellers = (0..<4).map { DispatchQueue(label: "soak.cancel.\($0)") }

func ended(_ index: Int, _ kind: String) {
    endings.withLock { $0[index] &+= 1 }
    kinds.withLock { $0[kind, default: 0] += 1 }
    window.signal()
}

let runner = options.raw ? RawRunner(base: options.baseURL) : nil
let cacheDirectory = FileManager.default.temporaryDirectory.appendingPathComponent("tern-soak-\(UUID().uuidString)")
let client = Client(baseURL: options.baseURL) {
    $0.callbackQueue = .queue(callbacks)
    $0.transportSettings.maximumConnectionsPerHost = options.inFlight
    $0.timeout = 30
    $0.cacheStorage.directory = cacheDirectory
}

let warmup = min(1_000, options.count / 10)
var rssAfterWarmup = residentMegabytes()
/// RSS every 10,000 requests sent: whether memory keeps growing, and by how much.
var checkpoints: [(sent: Int, megabytes: Double)] = []
let started = Date()
for (index, job) in jobs.enumerated() {
    if index == warmup { rssAfterWarmup = residentMegabytes() }
    if index > 0, index % 10_000 == 0 { checkpoints.append((index, residentMegabytes())) }
    window.wait()
    let canceller = cancellers[index % cancellers.count]
    if let runner {
        runner.start(job, canceller: canceller) { ended(index, $0) }
        continue
    }
    var request = Request<Data>(job.path, method: HTTPMethod(rawValue: job.method), headers: ["Authorization": "Bearer soak"])
    if let body = job.body { request.body = .data(body, contentType: "application/json") }
    request.timeout = job.timeout
    request.repeatStrategy = job.strategy
    request.cachePolicy = job.cache
    request.maximumResponseSize = job.limit
    let handle = client.send(request) { result in
        switch result {
        case .success(let response): ended(index, "\(response.statusCode)")
        case .failure(let error): ended(index, kind(of: error))
        }
    }
    if let delay = job.cancelAfter { canceller.asyncAfter(deadline: .now() + delay) { handle.cancel() } }
}
// Every request has ended once the whole window is free again.
for _ in 0..<options.inFlight { window.wait() }
let seconds = Date().timeIntervalSince(started)
Thread.sleep(forTimeInterval: 0.5)  // a late second callback would show up here

let counts = endings.withLock { $0 }
let missing = counts.filter { $0 == 0 }.count
let doubled = counts.filter { $0 > 1 }.count
let running = options.raw ? 0 : client.runningRequests.count
let rss = residentMegabytes()
let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: cacheDirectory.appendingPathComponent("tmp").path))?.count ?? 0
try? FileManager.default.removeItem(at: cacheDirectory)
print(
    "tern-soak \(options.raw ? "raw URLSession" : "Tern"): \(options.count) requests, \(options.inFlight) in flight, \(String(format: "%.1f", seconds)) s (\(Int(Double(options.count) / seconds)) req/s)"
)
print(
    "ended once: \(counts.count - missing - doubled), missing: \(missing), doubled: \(doubled), still registered: \(running), cache temp files left: \(leftovers)"
)
print(String(format: "RSS: %.1f MB after warm-up, %.1f MB at the end (+%.1f MB)", rssAfterWarmup, rss, rss - rssAfterWarmup))
if !checkpoints.isEmpty {
    let points = checkpoints.map { String(format: "%dk %.1f", $0.sent / 1000, $0.megabytes) }
    print("RSS per 10,000 requests sent: " + points.joined(separator: ", ") + " MB")
}
print("outcomes: " + kinds.withLock { $0 }.sorted { $0.value > $1.value }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
exit(missing == 0 && doubled == 0 && running == 0 && leftovers == 0 ? 0 : 1)
