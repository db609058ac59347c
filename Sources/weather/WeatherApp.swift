import Foundation
import Tern

/// The app's screens, each a command: built only on Tern's public API.
struct WeatherApp {
    let api: Client
    let favourites: Favourites
    let isOffline: Bool

    /// Home: the favourites' current weather, fetched concurrently, cache then network. Cached
    /// values (from the last run) are printed at once and marked; the fresh ones follow. When the
    /// server cannot be reached, the cached values are shown marked as stale.
    func home() async -> Int32 {
        print(
            isOffline
                ? "Tern weather — offline demo data (use --base-url URL for a real server)"
                : "Tern weather — \(api.configuration.baseURL ?? "")")
        if !isOffline, !NetworkMonitor.system.status.isReachable {
            print("⚠ This device is offline: cached weather is shown where there is some.")
        }
        let ids = favourites.load()
        let started = Date()
        let screens = HomeScreens(count: ids.count)
        let refreshed = Locked(0)
        await withTaskGroup(of: Void.self) { group in
            for (index, id) in ids.enumerated() {
                group.addTask {
                    do {
                        for try await response in api.responses(for: Self.currentWeather(id)) {
                            let reply = response.value
                            let row =
                                Self.row(reply.city, conditionWidth: 18) + (reply.observed ?? "--:--:--") + Self.marker(response.source)
                            screens.record(index, row, final: response.source != .cache)
                            if response.source == .network || response.source == .revalidated { refreshed.withLock { $0 += 1 } }
                        }
                    } catch {
                        // Named as the user knows the city, not by its id.
                        let name = WeatherData.city(named: id).map { Self.padded("\($0.name) \($0.pinyin) (\($0.province))", to: 30) } ?? id
                        screens.record(index, "\(name) \(Self.explain(error))", final: true)
                    }
                }
            }
            // The cached screen, once every city has a cached value or its final answer.
            if let cached = await screens.firstScreen() {
                print("")
                print("  " + Self.padded("Favourites (cached)", to: 30) + " Now    " + Self.padded("Weather", to: 18) + "observed")
                cached.forEach { print("  " + $0) }
            }
        }
        print("")
        print("  " + Self.padded("Favourites", to: 30) + " Now    " + Self.padded("Weather", to: 18) + "observed")
        let rows = screens.finalRows()
        rows.forEach { print("  " + $0) }
        print("")
        let stale = rows.filter { $0.hasSuffix(Self.marker(.stale)) }.count
        let fresh = refreshed.withLock { $0 }
        if stale > 0 {
            let verb = stale == 1 ? "shows" : "show"
            print("The weather server is unreachable: \(stale) of \(Self.cities(rows.count)) \(verb) cached data (stale).")
        } else if fresh < rows.count {
            print("\(fresh) of \(Self.cities(rows.count)) refreshed; \(rows.count - fresh) could not be.")
        } else {
            print(String(format: "%@ refreshed concurrently in %.0f ms", Self.cities(rows.count), Date().timeIntervalSince(started) * 1000))
        }
        return 0
    }

    /// The current weather of one city: cache then network, stored in memory and on disk, and
    /// served stale when the network fails.
    static func currentWeather(_ id: String) -> WeatherAPI.CurrentWeather {
        WeatherAPI.currentWeather(cityID: id)
    }

    /// How a row says where its value came from.
    static func marker(_ source: ResponseSource) -> String {
        switch source {
        case .cache: "  · cached"
        case .stale: "  · stale"
        case .network, .revalidated: ""
        }
    }

    /// Search: cities whose name, pinyin or province match `text`. A newer search cancels an
    /// older one still in flight (`.cancelOlder` with the key "search").
    func search(_ text: String) async -> Int32 {
        do {
            let cities = try await api.send(WeatherAPI.search(query: text)).value.cities
            let verb = cities.count == 1 ? "matches" : "match"
            print(cities.isEmpty ? "No city matches \"\(text)\"." : "\(Self.cities(cities.count)) \(verb) \"\(text)\":")
            cities.forEach { print("  " + Self.row($0) + "  id \($0.id)") }
            return 0
        } catch {
            print("Search failed: \(Self.explain(error))")
            return 1
        }
    }

    /// Detail: one city's five-day forecast.
    func detail(_ name: String) async -> Int32 {
        guard let id = Self.resolve(name) else { return Self.unknownCity(name) }
        do {
            let reply = try await api.send(WeatherAPI.forecast(cityID: id)).value
            print(Self.row(reply.city))
            for day in reply.days {
                print(String(format: "  day %d  %4d°C / %4d°C  ", day.day, day.high, day.low) + day.condition)
            }
            return 0
        } catch {
            print("Forecast failed: \(Self.explain(error))")
            return 1
        }
    }

    /// Favourites: list, add or remove.
    func favouritesCommand(_ arguments: [String]) -> Int32 {
        var ids = favourites.load()
        switch (arguments.first, arguments.dropFirst().first) {
        case ("list", _), (nil, _):
            print("Favourites (\(favourites.file.path)):")
            ids.forEach { id in print("  " + (WeatherData.city(named: id).map { "\($0.name) \($0.pinyin)  id \(id)" } ?? id)) }
            return 0
        case ("add", let name?):
            guard let id = Self.resolve(name) else { return Self.unknownCity(name) }
            guard !ids.contains(id) else {
                print("\(name) is already a favourite.")
                return 0
            }
            ids.append(id)
            return save(ids, "Added \(name).")
        case ("remove", let name?):
            guard let id = Self.resolve(name) else { return Self.unknownCity(name) }
            ids.removeAll { $0 == id }
            return save(ids, "Removed \(name).")
        default:
            print("usage: weather fav [list | add CITY | remove CITY]")
            return 2
        }
    }

    private func save(_ ids: [String], _ message: String) -> Int32 {
        do {
            try favourites.save(ids)
            print(message)
            return 0
        } catch {
            print("Cannot save favourites to \(favourites.file.path): \(error.localizedDescription)")
            return 1
        }
    }

    /// A city's line; with `conditionWidth`, the condition is padded so that a column can follow.
    static func row(_ city: City, conditionWidth: Int? = nil) -> String {
        padded("\(city.name) \(city.pinyin) (\(city.province))", to: 30) + String(format: "%4d°C  ", city.temperature)
            + (conditionWidth.map { padded(city.condition, to: $0) } ?? city.condition)
    }

    /// `text` padded with spaces to `columns` terminal columns; CJK characters take two.
    /// "1 city", "4 cities".
    static func cities(_ count: Int) -> String {
        count == 1 ? "1 city" : "\(count) cities"
    }

    static func padded(_ text: String, to columns: Int) -> String {
        let width = text.unicodeScalars.reduce(0) { $0 + ($1.value >= 0x1100 && $1.properties.isIdeographic ? 2 : 1) }
        return text + String(repeating: " ", count: max(1, columns - width))
    }

    /// A city id from an id, a name or a pinyin; ids are accepted as given for real servers.
    static func resolve(_ name: String) -> String? {
        if let city = WeatherData.city(named: name) { return city.id }
        return name.allSatisfy(\.isNumber) && !name.isEmpty ? name : nil
    }

    static func unknownCity(_ name: String) -> Int32 {
        print("Unknown city \"\(name)\": try `weather search \(name.prefix(3))`.")
        return 1
    }

    /// A short, user-facing explanation of a failure.
    static func explain(_ error: any Error) -> String {
        guard let error = error as? TernError else { return error.localizedDescription }
        switch error {
        case .transport(let urlError) where urlError.code == .cannotConnectToHost:
            return "the weather server is unreachable (Transport error \(urlError.code.rawValue))"
        case .unacceptableStatus(404, _, _, _), .business(404, _, _):
            return "unknown city (HTTP 404)"
        case .business(let code, let message, _):
            return "the weather service refused: \(message) (code \(code))"
        case .decoding, .unacceptableContentType:
            return "the server sent a malformed response (\(error))"
        default:
            return error.description
        }
    }
}
