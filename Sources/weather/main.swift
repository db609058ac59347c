import Foundation
import Tern

// `weather`: a weather app on a terminal, built only on Tern's public API.
// It runs offline against embedded data (served through TernStubs) unless `--base-url URL`
// names a real server, such as scripts/weather_server.py.

let usage = """
    usage: weather [--base-url URL] [--data-dir DIR] [--offline] [--verbose] [command]
      home (default)        the favourites' current weather, refreshed concurrently
      search TEXT           cities by name, pinyin or province
      search -i             search as you type (stale searches are cancelled)
      detail CITY           a city's five-day forecast (id, name or pinyin)
      fav [list | add CITY | remove CITY]   changes sync through an outbox, offline too
      outbox                the favourite changes waiting for the server
      radar [--output FILE] download the rain radar image with a progress bar
      live [--readings N]   the favourites' temperatures pushed over a WebSocket, reconnecting
      export-data           the embedded dataset as JSON, for scripts/weather_server.py
      export-radar FILE     the radar image, for scripts/weather_server.py --radar FILE
    """

var arguments = Array(CommandLine.arguments.dropFirst())
@MainActor func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name) else { return nil }
    guard index + 1 < arguments.count else {
        FileHandle.standardError.write(Data("weather: \(name) needs a value\n".utf8))
        exit(2)
    }
    defer { arguments.removeSubrange(index...index + 1) }
    return arguments[index + 1]
}
let playsOffline = arguments.contains("--offline")
arguments.removeAll { $0 == "--offline" }
let verbose = arguments.contains("--verbose")
arguments.removeAll { $0 == "--verbose" }
let logger = verbose ? RequestLogger.standardError(level: .debug) : nil
if verbose { Redaction.shared.parameterNames.insert("device_id") }
let baseURL = option("--base-url")
let dataDirectory = option("--data-dir").map { URL(fileURLWithPath: $0) }
let radarFile = option("--output").map { URL(fileURLWithPath: $0) }
let liveReadings = option("--readings").flatMap { Int($0) }

let api = Client(baseURL: baseURL ?? "https://weather.embedded/") { configuration in
    configuration.timeout = 10
    configuration.callbackQueue = .immediate
    // Responses are cached beside the favourites (the home screen reads them first).
    configuration.cacheStorage.directory = Favourites(directory: dataDirectory).file.deletingLastPathComponent().appendingPathComponent(
        "cache")
    if baseURL == nil {
        let embedded = EmbeddedWeatherServer.makeTransport()
        // --offline: the embedded server's network is down (a real server: stop it).
        if playsOffline { embedded.goOffline() }
        configuration.transport = embedded
        configuration.networkMonitor = embedded.networkMonitor
    }
    // --verbose: the log of every request on standard error (device ID and other secrets redacted).
    if let logger { configuration.monitors = [logger] }
}
WeatherAPI.configure(deviceID: DeviceID.load(beside: Favourites(directory: dataDirectory)))
let app = WeatherApp(api: api, favourites: Favourites(directory: dataDirectory), isOffline: baseURL == nil)

let status: Int32
switch arguments.first {
case nil, "home": status = await app.home()
case "search" where arguments.dropFirst().first == "-i":
    status = InteractiveSearch(api: api).run()
case "search":
    let text = arguments.dropFirst().joined(separator: " ")
    if text.isEmpty { print("usage: weather search TEXT"); status = 2 } else { status = await app.search(text) }
case "detail":
    if let name = arguments.dropFirst().first { status = await app.detail(name) } else { print("usage: weather detail CITY"); status = 2 }
case "fav":
    let change = Array(arguments.dropFirst())
    status = app.favouritesCommand(change)
    if status == 0, let action = change.first, action == "add" || action == "remove",
        let id = WeatherApp.resolve(change.dropFirst().first ?? "")
    {
        let sync = FavouriteSync(api: api, directory: app.favourites.file.deletingLastPathComponent())
        if sync.record(action, cityID: id) { sync.report(pending: await sync.settle(seconds: 3)) }
    }
case "outbox":
    let sync = FavouriteSync(api: api, directory: app.favourites.file.deletingLastPathComponent())
    _ = await sync.settle(seconds: 3)
    sync.list()
    status = 0
case "radar":
    status = await Radar.download(
        api: api, to: radarFile ?? app.favourites.file.deletingLastPathComponent().appendingPathComponent("radar.pgm"))
case "live":
    let cities = app.favourites.load()
    status = await LiveScreen.run(api: api, cityIDs: cities, readings: max(1, liveReadings ?? cities.count * 6))
case "export-radar":
    if let path = arguments.dropFirst().first {
        do { try Radar.image().write(to: URL(fileURLWithPath: path)); status = 0 } catch {
            print("weather: \(error.localizedDescription)"); status = 1
        }
    } else {
        print("usage: weather export-radar FILE"); status = 2
    }
case "export-data":
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let dataset = WeatherData.cities.map { city in ForecastReply(code: 0, city: city, days: WeatherData.forecast(for: city)) }
    print(String(decoding: (try? encoder.encode(dataset)) ?? Data("[]".utf8), as: UTF8.self))
    status = 0
case "help", "--help", "-h": print(usage); status = 0
default: print("weather: unknown command \"\(arguments[0])\"\n" + usage); status = 2
}
logger?.flush()
exit(status)
