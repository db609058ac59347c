import Foundation
import TernChildProcess

/// The curl command-line tool as a benchmark reference, on the same libcurl as Tern's transport:
/// sequential GETs in one process (one connection, reused), GETs with many in flight
/// (`--parallel`), and downloads, as libcurl's own tool does them.
enum CurlCommandLine {
    /// Microseconds of wall-clock and of CPU per request, the process start-up taken out (a run
    /// of `count` URLs minus a run of one, over `count - 1`); nil where there is no `curl` command.
    static func perRequest(url: String, count: Int) -> (wallMicroseconds: Double, cpuMicroseconds: Double)? {
        guard let many = run(url: url, count: count), let one = run(url: url, count: 1) else { return nil }
        let requests = Double(max(1, count - 1))
        return ((many.wall - one.wall) / requests * 1e6, (many.cpu - one.cpu) / requests * 1e6)
    }

    /// `count` GETs of `url` with `inFlight` at once: requests a second and CPU microseconds per
    /// request, the process start-up taken out as above.
    static func parallel(url: String, count: Int, inFlight: Int) -> (perSecond: Double, cpuMicroseconds: Double)? {
        let options = ["--parallel", "--parallel-max", String(inFlight), "--parallel-immediate"]
        guard let many = run(url: url, count: count, options: options), let one = run(url: url, count: 1, options: options)
        else { return nil }
        let requests = Double(max(1, count - 1))
        return (requests / (many.wall - one.wall), (many.cpu - one.cpu) / requests * 1e6)
    }

    /// `count` sequential downloads of `url`, whose body is `megabytes` long: megabytes a second,
    /// counted as the Tern workload counts them.
    static func downloads(url: String, count: Int, megabytes: Double) -> Double? {
        guard let many = run(url: url, count: count), let one = run(url: url, count: 1) else { return nil }
        return megabytes * Double(max(1, count - 1)) / (many.wall - one.wall)
    }

    /// The tool, if this machine has one.
    private static let tool = ["/usr/bin/curl", "/usr/local/bin/curl", "/bin/curl"].first(where: FileManager.default.isExecutableFile)

    /// Seconds of wall-clock and CPU for one `curl` process fetching `url` `count` times (URLs
    /// from a config file).
    private static func run(url: String, count: Int, options: [String] = []) -> (wall: Double, cpu: Double)? {
        guard let tool else { return nil }
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("tern-bench-curl-\(UUID().uuidString).conf")
        defer { try? FileManager.default.removeItem(at: config) }
        let lines = String(repeating: "url = \"\(url)\"\noutput = \"/dev/null\"\n", count: count)
        guard (try? lines.write(to: config, atomically: true, encoding: .utf8)) != nil else { return nil }
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["--silent", "--fail"] + options + ["--config", config.path]
        let start = DispatchTime.now().uptimeNanoseconds
        let cpuStart = cpuSeconds(children: true)
        guard (try? process.run()) != nil else { return nil }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, cpuSeconds(children: true) - cpuStart)
    }
}
