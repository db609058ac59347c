import Foundation

/// One city and its current weather.
struct City: Codable, Sendable {
    let id: String
    let name: String
    let pinyin: String
    let province: String
    let latitude: Double
    let longitude: Double
    let temperature: Int
    let condition: String

    func matches(_ text: String) -> Bool {
        !text.isEmpty && (name.contains(text) || pinyin.lowercased().hasPrefix(text) || province.contains(text))
    }
}

/// `GET /v1/weather` answer.
struct WeatherReply: Codable, Sendable {
    let code: Int
    let city: City
    /// When the server observed it (local "HH:mm:ss"), so a cached answer shows its age.
    var observed: String?

    /// The observation time for a reply made now, or `seconds` from now.
    static func now(after seconds: TimeInterval = 0) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss"
        return formatter.string(from: Date(timeIntervalSinceNow: seconds))
    }
}

/// One day of a forecast.
struct DayForecast: Codable, Sendable {
    let day: Int
    let high: Int
    let low: Int
    let condition: String
}

/// `GET /v1/forecast` answer.
struct ForecastReply: Codable, Sendable {
    let code: Int
    let city: City
    let days: [DayForecast]
}

/// `GET /v1/search` answer.
struct SearchReply: Codable, Sendable {
    let code: Int
    let cities: [City]
}

/// The embedded dataset the offline mode serves: the cities of `CityTable` with generated but
/// plausible late-autumn weather (colder to the north and on the plateau), the same every run.
enum WeatherData {
    static let cities: [City] = {
        var placeInProvince: [String: Int] = [:]
        return CityTable.text.split(separator: "\n").map { line in
            let field = line.split(separator: " ").map(String.init)
            let municipality = field[2].hasSuffix("=")
            let place = placeInProvince[field[0], default: 0] + 1
            placeInProvince[field[0]] = place
            let id = "101" + field[0] + (municipality ? "0100" : String(format: "%02d01", place))
            let latitude = Double(field[4]) ?? 0, longitude = Double(field[5]) ?? 0
            let temperature = climate(id: id, latitude: latitude, longitude: longitude)
            return City(
                id: id, name: municipality ? String(field[2].dropLast()) : field[2], pinyin: field[3],
                province: field[1], latitude: latitude, longitude: longitude,
                temperature: temperature, condition: condition(id: id, latitude: latitude, temperature: temperature))
        }
    }()

    /// A deterministic number from a city id, for variety without randomness.
    private static func seed(_ id: String) -> Int {
        id.unicodeScalars.reduce(0) { ($0 * 31 + Int($1.value)) % 10_007 }
    }

    /// Late-November afternoon temperature: about 1 °C colder per degree north, more beyond 35°N,
    /// much colder on the Yunnan–Guizhou and Tibetan plateaus, ±2 °C of local variety.
    private static func climate(id: String, latitude: Double, longitude: Double) -> Int {
        var celsius = 24 - (latitude - 20) - max(0, latitude - 35) * 0.8
        if longitude < 104 && latitude < 38 { celsius -= 8 }
        if longitude < 100 && latitude < 37 { celsius -= 6 }
        return Int(celsius.rounded()) + seed(id) % 5 - 2
    }

    private static func condition(id: String, latitude: Double, temperature: Int) -> String {
        let choices =
            temperature < 0
            ? ["晴 sunny", "多云 cloudy", "雪 snow", "阴 overcast"]
            : latitude >= 33
                ? ["晴 sunny", "多云 cloudy", "霾 haze", "阴 overcast"]
                : ["多云 cloudy", "小雨 light rain", "阵雨 showers", "晴 sunny", "阴 overcast"]
        return choices[seed(id) / 7 % choices.count]
    }

    /// The favourites a new user starts with.
    static let defaultFavourites = ["101010100", "101020100", "101280101", "101050101"]

    private static let conditions = ["晴 sunny", "多云 cloudy", "阴 overcast", "小雨 light rain", "阵雨 showers", "雪 snow", "霾 haze"]

    /// A plausible five-day forecast, the same every time for the same city.
    static func forecast(for city: City) -> [DayForecast] {
        let seed = city.id.unicodeScalars.reduce(0) { ($0 * 31 + Int($1.value)) % 10_007 }
        return (1...5).map { day in
            let swing = (seed / day + day * 7) % 7 - 3
            let high = city.temperature + 3 + swing
            return DayForecast(
                day: day, high: high, low: high - 6 - (seed + day) % 4,
                condition: conditions[(seed + day * 3) % conditions.count])
        }
    }

    /// The city with this id, or the first whose name or pinyin is `text`.
    static func city(named text: String) -> City? {
        cities.first { $0.id == text || $0.name == text || $0.pinyin.lowercased() == text.lowercased() }
    }
}
