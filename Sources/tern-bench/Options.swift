import Foundation

/// tern-bench's command line: which benchmark to run and its settings (see `scripts/bench.sh` and
/// the scripts beside it for how each is started).
struct Options {
    var baseURL = ""
    var json = false
    var rounds = 5
    var scale = 1.0
    var rssChild: String?
    var inflightChild: String?
    var micro = false
    /// JSON parsing and decoding rows only (`ParserBench`).
    var parsers = false
    var microThresholds = false
    var variants = false
    var hooks = false
    var delivery = false
    var cache = false
    var cacheOnly: String?
    var cacheHits = false
    /// The outbox rows (`OutboxBench`); `sinkLog` is nginx's log of `/sink/` (`TERN_BENCH_SINK_LOG`).
    var outbox = false
    /// Request-body compression against the gzip tool (`CompressionBench`).
    var compression = false
    /// "enqueue" or "replay": one part of the outbox rows.
    var outboxOnly: String?
    var sinkLog = ProcessInfo.processInfo.environment["TERN_BENCH_SINK_LOG"]
    var downloadFile = false
    /// A 1 GiB body produced while it is sent, against the curl tool from a pipe.
    var streamUpload = false
    var streamUploadChild: String?
    /// Only the libcurl rows (and the curl command-line tool): a quick look at Tern on libcurl.
    var curlOnly = false
    /// Only this many sequential GETs by Tern on libcurl, for a profiler: `--profile-curl N`
    /// (async), `--profile-chained N` (each completion on the loop thread sends the next) or
    /// `--profile-executor N` (async, from a task on the loop's executor), `--profile-curl64 N`
    /// (async, 64 in flight on 64 connections); `--profile-urlsession N`:
    /// the same by raw URLSession, the baseline those rows are compared with;
    /// `--profile-tern-urlsession N`: by Tern on its URLSession transport.
    var profile: (style: String, count: Int)?
    var downloadFileChild: String?
    var count: Int?
    /// `--websocket URL --tcp-port N --minimal-websocket URL --python PATH --ws-client SCRIPT`:
    /// the WebSocket rows.
    var webSocket: String?
    var tcpPort: Int32 = 0
    var minimalWebSocket = ""
    var python = "python3"
    var webSocketClient = "bench/websocket_client.py"
    var webSocketIdleChild: String?
    /// The idle child opens its sockets all at once, not each after the one before has opened.
    var openAtOnce = false
    /// `--echo-servers TCP_PORT WS_PORT`: serve the WebSocket floor's echo servers until killed.
    var echoServers: (tcp: UInt16, webSocket: UInt16)?

    init(_ arguments: [String]) {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            switch argument {
            case "--base-url": baseURL = iterator.next() ?? ""
            case "--json": json = true
            case "--rounds": rounds = Int(iterator.next() ?? "") ?? rounds
            case "--quick": scale = 0.1; rounds = 3
            case "--rss-child": rssChild = iterator.next()
            case "--inflight-child": inflightChild = iterator.next()
            case "--micro": micro = true; baseURL = baseURL.isEmpty ? "-" : baseURL
            case "--parsers": parsers = true; baseURL = baseURL.isEmpty ? "-" : baseURL
            case "--micro-thresholds": microThresholds = true; baseURL = baseURL.isEmpty ? "-" : baseURL
            case "--variants": variants = true
            case "--hooks": hooks = true
            case "--delivery": delivery = true
            case "--cache": cache = true; baseURL = baseURL.isEmpty ? "-" : baseURL
            case "--cache-hits": cacheHits = true
            case "--outbox": outbox = true
            case "--compression": compression = true; baseURL = baseURL.isEmpty ? "-" : baseURL
            case "--outbox-only": outbox = true; outboxOnly = iterator.next()
            case "--download-file": downloadFile = true
            case "--stream-upload": streamUpload = true
            case "--stream-upload-child": streamUploadChild = iterator.next()
            case "--curl-only": curlOnly = true
            case "--profile-curl", "--profile-chained", "--profile-executor", "--profile-urlsession", "--profile-curl64",
                "--profile-tern-urlsession", "--profile-curl-download":
                profile = (String(argument.dropFirst("--profile-".count)), Int(iterator.next() ?? "") ?? 20_000)
            case "--download-file-child": downloadFileChild = iterator.next()
            case "--count": count = Int(iterator.next() ?? "")
            case "--websocket": webSocket = iterator.next(); baseURL = baseURL.isEmpty ? "-" : baseURL
            case "--tcp-port": tcpPort = Int32(iterator.next() ?? "") ?? 0
            case "--minimal-websocket": minimalWebSocket = iterator.next() ?? ""
            case "--python": python = iterator.next() ?? python
            case "--ws-client": webSocketClient = iterator.next() ?? webSocketClient
            case "--ws-idle-child": webSocketIdleChild = iterator.next(); baseURL = baseURL.isEmpty ? "-" : baseURL
            case "--at-once": openAtOnce = true
            case "--echo-servers":
                echoServers = (UInt16(iterator.next() ?? "") ?? 0, UInt16(iterator.next() ?? "") ?? 0)
                baseURL = baseURL.isEmpty ? "-" : baseURL
            case "--cache-only": cache = true; cacheOnly = iterator.next(); baseURL = baseURL.isEmpty ? "-" : baseURL
            default:
                FileHandle.standardError.write(Data("tern-bench: unknown argument \(argument)\n".utf8))
                exit(2)
            }
        }
        guard !baseURL.isEmpty else {
            FileHandle.standardError.write(Data("usage: tern-bench --base-url URL [--json] [--rounds N] [--quick]\n".utf8))
            exit(2)
        }
    }

    func count(_ full: Int) -> Int { max(1, Int(Double(full) * scale)) }
}
