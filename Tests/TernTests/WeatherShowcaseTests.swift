import Foundation
import Testing
import TernChildProcess

// These suites start processes: `Process` exists on macOS and Linux only.
#if os(macOS) || os(Linux)
/// Runs the `weather` executable the way a newcomer does and checks what it prints.
@Suite struct WeatherShowcaseTests {
    /// Runs `weather` and waits for it without blocking a Swift concurrency thread (the pool has
    /// only as many threads as cores; a blocked one stalls every other test).
    /// The built `weather` executable: the test bundle sits in the build folder next to it.
    static func executable() throws -> URL {
        var executable = Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("weather")
        if !FileManager.default.fileExists(atPath: executable.path) {
            executable = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(".build/debug/weather")
        }
        try #require(FileManager.default.isExecutableFile(atPath: executable.path), "build the weather product first (swift build)")
        return executable
    }

    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> (status: Int32, output: String) {
        let executable = try executable()
        let process = ChildProcess()
        process.executableURL = executable
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        return try await onThreadOfItsOwn {
            let output = try process.runReadingOutput(errorsToo: true)
            return (process.terminationStatus, output)
        }
    }

    /// A scratch data directory for favourites.
    static func dataDirectory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("weather-\(UUID().uuidString)").path
    }

    /// Starts scripts/weather_server.py on a free port with the app's own dataset.
    static func startServer(
        malformed: Bool = false, minVersion: String? = nil, port: String? = nil
    ) async throws -> (url: String, process: ChildProcess) {
        let dataset = FileManager.default.temporaryDirectory.appendingPathComponent("weather-data-\(UUID().uuidString).json")
        let export = try await run(["export-data"])
        try Data(export.output.utf8).write(to: dataset)
        let radar = dataset.deletingPathExtension().appendingPathExtension("pgm")
        #expect(try await run(["export-radar", radar.path]).status == 0)
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments =
            ["python3", root.appendingPathComponent("scripts/weather_server.py").path, dataset.path, "--radar", radar.path]
            + (malformed ? ["--malformed"] : []) + (minVersion.map { ["--min-version", $0] } ?? []) + (port.map { ["--port", $0] } ?? [])
        let pipe = Pipe()
        process.standardOutput = .pipe(pipe)
        process.standardError = .discard
        try process.run()
        let line = await onThreadOfItsOwn {
            var bytes = Data()
            while let byte = try? pipe.fileHandleForReading.readUpTo(1), !byte.isEmpty, byte != Data("\n".utf8) {
                bytes.append(byte)
            }
            return String(decoding: bytes, as: UTF8.self)
        }
        let port = try #require(line.split(separator: " ").last.map(String.init), "weather_server.py said: \(line)")
        return ("http://127.0.0.1:\(port)", process)
    }

    /// Stops a server and waits for it without blocking a concurrency thread.
    static func stop(_ process: ChildProcess) async {
        await onThreadOfItsOwn {
            process.terminate()
            process.waitUntilExit()
        }
    }

    @Test func homeScreenShowsTheFavouritesOffline() async throws {
        let data = ["--data-dir", Self.dataDirectory()]
        let (status, output) = try await Self.run(data)
        #expect(status == 0, "\(output)")
        #expect(output.contains("offline demo data"))
        for city in ["北京 Beijing", "上海 Shanghai", "广州 Guangzhou", "哈尔滨 Harbin"] {
            #expect(output.contains(city), "missing \(city) in:\n\(output)")
        }
        #expect(output.contains("4 cities refreshed concurrently"))
        #expect(!output.contains("(cached)"), "nothing was cached yet:\n\(output)")
        // Second launch: cached values first, marked, then the fresh ones.
        let again = try await Self.run(data).output
        let cached = try #require(again.range(of: "Favourites (cached)"), "\(again)")
        let fresh = try #require(again.range(of: "Favourites ", range: cached.upperBound..<again.endIndex), "\(again)")
        #expect(again[cached.upperBound..<fresh.lowerBound].components(separatedBy: "· cached").count == 5, "\(again)")
        #expect(!again[fresh.upperBound...].contains("· cached") && again.contains("4 cities refreshed"))
    }

    /// `weather live`: readings pushed over a WebSocket by the embedded server, which restarts
    /// (a 1001 close frame) after four rounds; the screen reconnects, subscribes again and goes on.
    @Test func theLiveScreenShowsPushedReadingsAndReconnects() async throws {
        let (status, output) = try await Self.run(["--data-dir", Self.dataDirectory(), "live", "--readings", "20"])
        #expect(status == 0, "\(output)")
        let readings = output.split(separator: "\n").filter { $0.contains("°C  at ") }
        #expect(readings.count == 20, "\(output)")
        #expect(readings.contains { $0.contains("哈尔滨 Harbin") })
        #expect(output.components(separatedBy: "● connected").count == 3, "\(output)")
        #expect(output.contains("reconnecting (attempt 1)") && output.hasSuffix("Done: 20 readings.\n"), "\(output)")
    }

    @Test func aServerWithoutALiveFeedIsExplained() async throws {
        let server = try await Self.startServer()
        defer { Task { await Self.stop(server.process) } }
        let (status, output) = try await Self.run(["--base-url", server.url, "live"])
        #expect(status == 1 && output.contains("this server has no live feed (HTTP 404"), "\(output)")
    }

    #if os(Linux)
    /// Where SQLite cannot be loaded (`TERN_SQLITE=none` stands in for a machine without
    /// libsqlite3.so.0), requests still work and the response cache is the memory level alone,
    /// with one notice that says so.
    @Test func withoutSQLiteTheAppRunsOnAMemoryCacheAndSaysSoOnce() async throws {
        let (status, output) = try await Self.run(["--data-dir", Self.dataDirectory()], environment: ["TERN_SQLITE": "none"])
        #expect(status == 0, "\(output)")
        #expect(output.contains("4 cities refreshed concurrently"), "\(output)")
        let notices = output.components(separatedBy: "\n").filter { $0.contains("SQLite is unavailable") }
        #expect(notices.count == 1, "\(output)")
        #expect(notices.first?.contains("caching in memory only") == true && notices.first?.contains("trying again") == false)
    }
    #endif

    @Test func anUnreachableServerShowsCachedDataMarkedStale() async throws {
        let server = try await Self.startServer()
        let arguments = ["--base-url", server.url, "--data-dir", Self.dataDirectory()]
        #expect(try await Self.run(arguments).output.contains("4 cities refreshed"))
        await Self.stop(server.process)
        let (status, output) = try await Self.run(arguments)
        #expect(status == 0, "\(output)")
        let finalScreen = try #require(output.components(separatedBy: "Favourites ").last)
        #expect(finalScreen.components(separatedBy: "· stale").count == 5, "\(output)")
        #expect(output.contains("The weather server is unreachable: 4 of 4 cities show cached data (stale)."), "\(output)")
    }

    @Test(arguments: [false, true])
    func searchDetailAndFavourites(overHTTP: Bool) async throws {
        let server = overHTTP ? try await Self.startServer() : nil
        defer { server?.process.terminate() }
        let base = server.map { ["--base-url", $0.url] } ?? []
        let data = ["--data-dir", Self.dataDirectory()]

        let search = try await Self.run(base + ["search", "广东"])
        #expect(search.status == 0 && search.output.contains("21 cities match \"广东\""), "\(search.output)")
        #expect(search.output.contains("广州 Guangzhou") && search.output.contains("深圳 Shenzhen"))
        #expect(try await Self.run(base + ["search", "zzz"]).output.contains("No city matches \"zzz\"."))

        let detail = try await Self.run(base + ["detail", "harbin"])
        #expect(detail.status == 0 && detail.output.contains("哈尔滨 Harbin"), "\(detail.output)")
        #expect(detail.output.components(separatedBy: "\n").filter { $0.hasPrefix("  day ") }.count == 5)

        #expect(try await Self.run(data + ["fav", "add", "成都"]).output.contains("Added 成都."))
        let again = try await Self.run(data + ["fav", "add", "成都"])
        #expect(again.status == 0 && again.output.contains("成都 is already a favourite."), "\(again.output)")
        #expect(!again.output.contains("Added"))
        #expect(try await Self.run(base + ["search", "哈尔滨"]).output.contains("1 city matches \"哈尔滨\""))
        #expect(try await Self.run(data + ["fav", "remove", "beijing"]).output.contains("Removed beijing."))
        let list = try await Self.run(data + ["fav", "list"])
        #expect(list.output.contains("成都 Chengdu") && !list.output.contains("北京 Beijing"), "\(list.output)")
        let home = try await Self.run(base + data)
        #expect(
            home.output.contains("成都 Chengdu") && !home.output.contains("北京 Beijing") && home.output.contains("4 cities refreshed"),
            "\(home.output)")
    }

    @Test(arguments: [false, true])
    func radarDownloadShowsProgressAndSavesTheImage(overHTTP: Bool) async throws {
        let server = overHTTP ? try await Self.startServer() : nil
        defer { server?.process.terminate() }
        let base = server.map { ["--base-url", $0.url] } ?? []
        let saved = Self.dataDirectory() + "/radar.pgm"
        let (status, output) = try await Self.run(base + ["radar", "--output", saved])
        #expect(status == 0, "\(output)")
        // Not a terminal: one line per tenth, rising to 100 % of the known size, before the result.
        let bars = output.components(separatedBy: "\n").filter { $0.hasPrefix("Radar [") }
        #expect(bars.count >= 3, "\(output)")
        #expect(bars.last?.contains("100%  300 / 300 KB") == true, "\(output)")
        let percents = bars.compactMap { Int($0.split(separator: "]")[1].split(separator: "%")[0].trimmingCharacters(in: .whitespaces)) }
        #expect(percents == percents.sorted() && percents.count == bars.count)
        #expect(output.contains("Saved the radar image (640 × 480, 300 KB)"))
        let reference = FileManager.default.temporaryDirectory.appendingPathComponent("radar-\(UUID().uuidString).pgm")
        #expect(try await Self.run(["export-radar", reference.path]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: saved)) == Data(contentsOf: reference))
        #expect(output.components(separatedBy: "\n").filter { $0.hasPrefix("  |") }.count == 16, "a 16-line preview")
    }

    /// Ctrl-C in the middle of `weather radar`, then again: the second run continues from the
    /// bytes the first one left, offline (stubs honour Range) and over HTTP.
    @Test(arguments: [false, true])
    func anInterruptedRadarDownloadResumes(overHTTP: Bool) async throws {
        let server = overHTTP ? try await Self.startServer() : nil
        defer { server?.process.terminate() }
        let base = server.map { ["--base-url", $0.url] } ?? []
        let folder = Self.dataDirectory()
        let saved = folder + "/radar.pgm"
        let process = ChildProcess()
        process.executableURL = try Self.executable()
        process.arguments = base + ["radar", "--output", saved]
        process.standardOutput = .discard
        process.standardError = .discard
        try process.run()
        let partial = URL(fileURLWithPath: saved + ".terndownload")
        let interrupted = await Transfers.signal(SIGINT, to: process, whenFile: partial, reaches: 64 * 1024)
        try #require(interrupted, "weather radar ended, or wrote less than 64 KB in 60 s, before it was interrupted")
        #expect(!FileManager.default.fileExists(atPath: saved))
        // What the interrupted run left, for the message should the next run not resume from it.
        let left = Transfers.contents(URL(fileURLWithPath: folder)).map { name in
            "\(name) (\(Transfers.size(URL(fileURLWithPath: folder + "/" + name))) bytes)"
        }
        let record = (try? String(contentsOfFile: saved + ".terndownload.resume", encoding: .utf8)) ?? "no resume record"
        let (status, output) = try await Self.run(base + ["radar", "--output", saved])
        #expect(status == 0, "\(output)")
        #expect(output.contains("KB, resumed from "), "left: \(left), \(record)\n\(output)")
        let reference = FileManager.default.temporaryDirectory.appendingPathComponent("radar-\(UUID().uuidString).pgm")
        defer { try? FileManager.default.removeItem(at: reference) }
        #expect(try await Self.run(["export-radar", reference.path]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: saved)) == Data(contentsOf: reference))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["radar.pgm"])
    }

    @Test func clearMessagesForBadInput() async throws {
        let unknown = try await Self.run(["detail", "atlantis"])
        #expect(unknown.status == 1 && unknown.output.contains("Unknown city \"atlantis\""))
        let usage = try await Self.run(["frobnicate"])
        #expect(usage.status == 2 && usage.output.contains("unknown command"))
        let (status, output) = try await Self.run(["--base-url"])
        #expect(status == 2 && output.contains("--base-url needs a value"))
    }

    @Test func aFavouriteAddedOfflineSyncsWhenTheServerIsBackInTheNextRun() async throws {
        let data = ["--data-dir", Self.dataDirectory()]
        let offline = try await Self.run(data + ["--offline", "fav", "add", "成都"])
        #expect(offline.status == 0 && offline.output.contains("Added 成都."), "\(offline.output)")
        #expect(offline.output.contains("1 change will sync when the server is back (weather outbox)."), "\(offline.output)")
        let waiting = try await Self.run(data + ["--offline", "outbox"])
        #expect(waiting.output.contains("1 waiting") && waiting.output.contains("POST /v1/favourites  waiting"), "\(waiting.output)")
        let synced = try await Self.run(data + ["outbox"])
        #expect(synced.output.contains("0 waiting") && synced.output.contains("delivered (HTTP 201)"), "\(synced.output)")
        let online = try await Self.run(data + ["fav", "add", "西安"])
        #expect(online.output.contains("Synced with the server."), "\(online.output)")
    }

    /// The demo server stopped, not `--offline`: the change is tried, kept, and delivered by the
    /// next run once the server is back on the same address.
    @Test func aFavouriteAddedWhileTheServerIsStoppedSyncsWhenItIsBack() async throws {
        let first = try await Self.startServer()
        await Self.stop(first.process)
        let arguments = ["--base-url", first.url, "--data-dir", Self.dataDirectory()]
        let stopped = try await Self.run(arguments + ["fav", "add", "成都"])
        #expect(stopped.output.contains("Added 成都."), "\(stopped.output)")
        #expect(stopped.output.contains("1 change will sync when the server is back"), "\(stopped.output)")
        let waiting = try await Self.run(arguments + ["--offline", "outbox"])
        #expect(waiting.output.contains("1 waiting") && waiting.output.contains("tries;"), "\(waiting.output)")
        let port = try #require(first.url.split(separator: ":").last.map(String.init))
        let back = try await Self.startServer(port: port)
        defer { back.process.terminate() }
        let synced = try await Self.run(arguments + ["outbox"])
        #expect(synced.output.contains("0 waiting") && synced.output.contains("delivered (HTTP 201)"), "\(synced.output)")
    }

    @Test func aStoppedServerIsReportedAsUnreachable() async throws {
        let server = try await Self.startServer()
        #expect(try await Self.run(["--base-url", server.url, "search", "bei"]).output.contains("Beijing"))
        await Self.stop(server.process)
        let home = try await Self.run(["--base-url", server.url, "--data-dir", Self.dataDirectory()])
        #expect(home.output.contains("the weather server is unreachable"), "\(home.output)")
        // Nothing cached yet: each row names its city, and none counts as refreshed.
        #expect(home.output.contains("北京 Beijing") && !home.output.contains("101010100:"), "\(home.output)")
        #expect(home.output.contains("0 of 4 cities refreshed; 4 could not be."), "\(home.output)")
        let search = try await Self.run(["--base-url", server.url, "search", "bei"])
        #expect(search.status == 1 && search.output.contains("unreachable"))
    }

    @Test func aMalformedResponseIsReportedAsSuch() async throws {
        let server = try await Self.startServer(malformed: true)
        defer { server.process.terminate() }
        let search = try await Self.run(["--base-url", server.url, "search", "bei"])
        #expect(search.status == 1 && search.output.contains("malformed response"), "\(search.output)")
    }

    /// The server needs a device ID and a recent app version on every request: the weather
    /// group's parameter hook sends both, and its business rule turns the server's refusal (an
    /// HTTP 200 with code 1003) into a clear message.
    @Test func everyRequestCarriesTheDeviceAndVersionAndRefusalsAreExplained() async throws {
        let accepting = try await Self.startServer()
        let detail = try await Self.run(["--base-url", accepting.url, "detail", "beijing"])
        await Self.stop(accepting.process)
        #expect(detail.status == 0 && detail.output.contains("day 5"), "\(detail.output)")
        let retiring = try await Self.startServer(minVersion: "9.0")
        let refused = try await Self.run(["--base-url", retiring.url, "detail", "beijing"])
        await Self.stop(retiring.process)
        #expect(refused.status == 1, "\(refused.output)")
        #expect(
            refused.output.contains("the weather service refused: app version 2.4 is no longer served; please upgrade (code 1003)"),
            "\(refused.output)")
    }

    /// `--verbose` logs each request: the URL with the device ID redacted, the status, the time.
    @Test func verboseShowsTheLogOfEachRequest() async throws {
        let run = try await Self.run(["--data-dir", Self.dataDirectory(), "--verbose", "detail", "beijing"])
        #expect(run.status == 0)
        #expect(run.output.contains("[Tern] #"), "\(run.output)")
        #expect(run.output.contains("v1/forecast?app_version=2.4&city=101010100&device_id=<redacted> → 200"), "\(run.output)")
        #expect(run.output.contains("day 5"))
    }

    /// Types `keys` into `weather search -i` through a pseudo-terminal, `gap` seconds a key.
    private func typeIntoInteractiveSearch(_ keys: String, gap: Double) async throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let weather = try Self.executable()
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", root.appendingPathComponent("scripts/pty_type.py").path, keys, String(gap), "1.0",
            "--", weather.path, "search", "-i",
        ]
        process.standardError = .discard
        return try await onThreadOfItsOwn { try process.runReadingOutput() }
    }

    @Test func interactiveSearchFindsWhatIsTypedInChinese() async throws {
        let output = try await typeIntoInteractiveSearch("北京", gap: 0.2)
        let screens = output.components(separatedBy: "\u{1B}[2J").dropFirst()
        let last = try #require(screens.last { $0.contains("cities:") || $0.contains("1 city:") }, "no results were shown:\n\(output)")
        #expect(last.contains("search> 北京") && last.contains("Beijing"), "\(output)")
        #expect(output.contains("final query: 北京"), "\(output)")
    }

    /// A search with many results keeps the prompt on screen: the first rows, then how many more.
    @Test func interactiveSearchKeepsThePromptInView() async throws {
        let output = try await typeIntoInteractiveSearch("s", gap: 0.2)
        let screens = output.components(separatedBy: "\u{1B}[2J").dropFirst()
        let last = try #require(screens.last { $0.contains("cities:") }, "no results were shown:\n\(output)")
        let rows = last.components(separatedBy: "\r\n").filter { $0.hasPrefix("  ") && $0.contains("°C") }
        #expect(rows.count == 12 && last.contains("more: type more letters"), "\(last)")
    }

    @Test func interactiveSearchShowsOnlyTheFinalQuerysResults() async throws {
        // Type "she" 20 ms a key, faster than the embedded server's 30–120 ms answers, through a
        // pseudo-terminal, as a user would.
        let output = try await typeIntoInteractiveSearch("she", gap: 0.02)
        let screens = output.components(separatedBy: "\u{1B}[2J").dropFirst()
        let withResults = screens.filter { $0.contains("cities:") || $0.contains("1 city:") || $0.contains("no city matches") }
        #expect(!withResults.isEmpty, "no results were shown:\n\(output)")
        // A result screen only ever shows the text typed so far, and the last one the final text.
        #expect(withResults.allSatisfy { !$0.contains("Shanghai") || !$0.contains("search> she") }, "\(output)")
        let last = try #require(withResults.last)
        #expect(last.contains("search> she") && last.contains("Shenzhen") && !last.contains("Shanghai"), "\(output)")
        #expect(output.contains("final query: she"))
    }
}
#endif
