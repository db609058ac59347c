import Foundation

/// The curl command-line tool as a benchmark reference: `count` sequential GETs in one process
/// (one connection, reused), as libcurl's own tool does them.
enum CurlCommandLine {
    /// Microseconds of wall-clock and of CPU per request, the process start-up taken out (a run
    /// of `count` URLs minus a run of one, over `count - 1`); nil where there is no `curl` command.
    static func perRequest(url: String, count: Int) -> (wallMicroseconds: Double, cpuMicroseconds: Double)? {
        guard let tool = ["/usr/bin/curl", "/usr/local/bin/curl", "/bin/curl"].first(where: FileManager.default.isExecutableFile),
            let many = run(tool, url: url, count: count), let one = run(tool, url: url, count: 1)
        else { return nil }
        let requests = Double(max(1, count - 1))
        return ((many.wall - one.wall) / requests * 1e6, (many.cpu - one.cpu) / requests * 1e6)
    }

    /// Seconds of wall-clock and CPU for one `curl` process fetching `url` `count` times (URLs
    /// from a config file).
    private static func run(_ tool: String, url: String, count: Int) -> (wall: Double, cpu: Double)? {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("tern-bench-curl-\(UUID().uuidString).conf")
        defer { try? FileManager.default.removeItem(at: config) }
        let lines = String(repeating: "url = \"\(url)\"\noutput = \"/dev/null\"\n", count: count)
        guard (try? lines.write(to: config, atomically: true, encoding: .utf8)) != nil else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["--silent", "--fail", "--config", config.path]
        let start = DispatchTime.now().uptimeNanoseconds
        let cpuStart = cpuSeconds(children: true)
        guard (try? process.run()) != nil else { return nil }
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, cpuSeconds(children: true) - cpuStart)
    }
}
