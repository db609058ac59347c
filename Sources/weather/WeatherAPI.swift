import Foundation
import Tern

/// The weather server's API, described once: one group (base URL, the app's parameters on every
/// request, the server's business codes) and one definition per endpoint.
enum WeatherAPI {
    /// The app's version, sent on every request; the server may refuse versions it no longer serves.
    static let appVersion = "2.4"

    /// The group of every weather endpoint. The base URL is the client's unless `configure` sets one.
    static let group = APIGroup("weather")

    /// Sets the group up for this run: every request carries the device ID and app version (a
    /// parameter hook), and a 200 whose `code` is not 0 becomes `TernError.business` (a rule).
    static func configure(deviceID: String) {
        group.update { settings in
            settings.hooks.rewriteParameters("app-parameters") { parameters in
                parameters.query["device_id"] = deviceID
                parameters.query["app_version"] = appVersion
            }
            settings.hooks.rules.append(BusinessRule())
        }
    }

    /// `GET v1/weather`: a city's current weather, cache then network, stale when offline.
    struct CurrentWeather: Endpoint {
        typealias Value = WeatherReply
        let cityID: String
        var group: APIGroup { WeatherAPI.group }
        var path: String { "v1/weather" }
        var parameters: Parameters { ["city": cityID] }
        var tags: Set<String> { ["home"] }
        var cachePolicy: CachePolicy? {
            CachePolicy(read: .cacheThenNetwork, write: .both, maxAge: 24 * 3600, servesStaleOnError: true)
        }
    }

    /// `GET v1/forecast`: a city's five-day forecast.
    struct Forecast: Endpoint {
        typealias Value = ForecastReply
        let cityID: String
        var group: APIGroup { WeatherAPI.group }
        var path: String { "v1/forecast" }
        var parameters: Parameters { ["city": cityID] }
    }

    /// `GET v1/search`: cities by name, pinyin or province; a newer search cancels an older one.
    struct Search: Endpoint {
        typealias Value = SearchReply
        let text: String
        var group: APIGroup { WeatherAPI.group }
        var path: String { "v1/search" }
        var parameters: Parameters { ["q": text] }
        var repeatStrategy: RepeatStrategy? { .cancelOlder }
        var repeatKey: String? { "search" }
    }

    /// `GET v1/radar`: the rain radar image (a large download, with progress).
    struct RadarImage: Endpoint {
        typealias Value = Data
        var group: APIGroup { WeatherAPI.group }
        var path: String { "v1/radar" }
        var timeout: TimeInterval? { 60 }
    }

    /// WebSocket `v1/live`: temperatures pushed as they change (`LiveScreen`).
    struct Live: Endpoint {
        typealias Value = Data
        var group: APIGroup { WeatherAPI.group }
        var path: String { "v1/live" }
        var tags: Set<String> { ["live"] }
    }

    static func currentWeather(cityID: String) -> CurrentWeather { CurrentWeather(cityID: cityID) }
    static func forecast(cityID: String) -> Forecast { Forecast(cityID: cityID) }
    static func search(query: String) -> Search { Search(text: query) }
}

/// This installation's device ID: made once, kept beside the favourites.
enum DeviceID {
    static func load(beside favourites: Favourites) -> String {
        let file = favourites.file.deletingLastPathComponent().appendingPathComponent("device-id")
        if let saved = try? String(contentsOf: file, encoding: .utf8), !saved.isEmpty { return saved }
        let made = UUID().uuidString.lowercased()
        try? FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try? made.write(to: file, atomically: true, encoding: .utf8)
        return made
    }
}
