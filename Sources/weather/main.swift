import Foundation
import Tern

// `weather`: the seeds' weather app on a terminal, built only on Tern's public API.
// This first version shows the home screen: the favourite cities refreshed concurrently.
// It runs offline against embedded data unless `--base-url URL` names a real server.

let arguments = CommandLine.arguments.dropFirst()
var baseURL: String?
if let index = arguments.firstIndex(of: "--base-url") {
    guard arguments.index(after: index) < arguments.endIndex else {
        FileHandle.standardError.write(Data("weather: --base-url needs a URL\n".utf8))
        exit(2)
    }
    baseURL = arguments[arguments.index(after: index)]
}

let api = Client(baseURL: baseURL ?? "https://weather.embedded/") { configuration in
    configuration.timeout = 10
    configuration.callbackQueue = .immediate
    if baseURL == nil { configuration.transport = EmbeddedWeatherServer.makeTransport() }
}

print(baseURL.map { "Tern weather — server \($0)" } ?? "Tern weather — offline demo data (use --base-url URL for a real server)")
print("")
print("Favourites".padding(toLength: 22, withPad: " ", startingAt: 0) + "Now    Weather")

let started = Date()
let lines = await withTaskGroup(of: (Int, String).self) { group in
    for (index, id) in WeatherData.favourites.enumerated() {
        group.addTask {
            do {
                let reply = try await api.send(Request<WeatherReply>("v1/weather", query: ["city": id])).value
                let city = reply.city
                let label = "\(city.name) \(city.pinyin) (\(city.province))"
                return (index, label.padding(toLength: 20, withPad: " ", startingAt: 0) + String(format: "%4d°C  ", city.temperature) + city.condition)
            } catch {
                return (index, "\(id): \(error)")
            }
        }
    }
    var collected: [(Int, String)] = []
    for await line in group { collected.append(line) }
    return collected.sorted { $0.0 < $1.0 }.map(\.1)
}
lines.forEach { print("  " + $0) }
print("")
print(String(format: "%d cities refreshed concurrently in %.0f ms", lines.count, Date().timeIntervalSince(started) * 1000))
