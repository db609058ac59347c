import Foundation
import Tern

/// The app's screens, each a command: built only on Tern's public API.
struct WeatherApp {
    let api: Client
    let favourites: Favourites
    let isOffline: Bool

    /// Home: the favourites' current weather, fetched concurrently, in favourites order.
    func home() async -> Int32 {
        print(isOffline ? "Tern weather — offline demo data (use --base-url URL for a real server)" : "Tern weather — \(api.configuration.baseURL ?? "")")
        print("")
        print("  " + Self.padded("Favourites", to: 30) + " Now    Weather")
        let ids = favourites.load()
        let started = Date()
        let lines = await withTaskGroup(of: (Int, String).self) { group in
            for (index, id) in ids.enumerated() {
                group.addTask {
                    do {
                        let city = try await api.send(Request<WeatherReply>("v1/weather", query: ["city": id]).tagged("home")).value.city
                        return (index, Self.row(city))
                    } catch {
                        return (index, "\(id): \(Self.explain(error))")
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
        return 0
    }

    /// Search: cities whose name, pinyin or province match `text`. A newer search cancels an
    /// older one still in flight (`.cancelOlder` with the key "search").
    func search(_ text: String) async -> Int32 {
        let request = Request<SearchReply>("v1/search", query: ["q": text]).repeating(.cancelOlder, key: "search")
        do {
            let cities = try await api.send(request).value.cities
            print(cities.isEmpty ? "No city matches \"\(text)\"." : "\(cities.count) cities match \"\(text)\":")
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
            let reply = try await api.send(Request<ForecastReply>("v1/forecast", query: ["city": id])).value
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
            if !ids.contains(id) { ids.append(id) }
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

    static func row(_ city: City) -> String {
        padded("\(city.name) \(city.pinyin) (\(city.province))", to: 30) + String(format: "%4d°C  ", city.temperature) + city.condition
    }

    /// `text` padded with spaces to `columns` terminal columns; CJK characters take two.
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
        case .unacceptableStatus(404, _):
            return "unknown city (HTTP 404)"
        case .decoding, .unacceptableContentType:
            return "the server sent a malformed response (\(error))"
        default:
            return error.description
        }
    }
}
