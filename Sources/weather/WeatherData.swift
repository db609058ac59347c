import Foundation

/// One city and its current weather.
struct City: Codable, Sendable {
    let id: String
    let name: String
    let pinyin: String
    let province: String
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

/// The embedded dataset the offline mode serves.
enum WeatherData {
    static let cities: [City] = [
        City(id: "101010100", name: "北京", pinyin: "Beijing", province: "北京", temperature: 3, condition: "晴 sunny"),
        City(id: "101020100", name: "上海", pinyin: "Shanghai", province: "上海", temperature: 9, condition: "多云 cloudy"),
        City(id: "101280101", name: "广州", pinyin: "Guangzhou", province: "广东", temperature: 19, condition: "阵雨 showers"),
        City(id: "101280601", name: "深圳", pinyin: "Shenzhen", province: "广东", temperature: 21, condition: "多云 cloudy"),
        City(id: "101270101", name: "成都", pinyin: "Chengdu", province: "四川", temperature: 8, condition: "阴 overcast"),
        City(id: "101110101", name: "西安", pinyin: "Xian", province: "陕西", temperature: 2, condition: "霾 haze"),
        City(id: "101210101", name: "杭州", pinyin: "Hangzhou", province: "浙江", temperature: 10, condition: "小雨 light rain"),
        City(id: "101050101", name: "哈尔滨", pinyin: "Harbin", province: "黑龙江", temperature: -14, condition: "雪 snow"),
    ]

    /// The favourites a new user starts with.
    static let defaultFavourites = ["101010100", "101020100", "101280101", "101050101"]

    private static let conditions = ["晴 sunny", "多云 cloudy", "阴 overcast", "小雨 light rain", "阵雨 showers", "雪 snow", "霾 haze"]

    /// A plausible five-day forecast, the same every time for the same city.
    static func forecast(for city: City) -> [DayForecast] {
        let seed = city.id.unicodeScalars.reduce(0) { ($0 * 31 + Int($1.value)) % 10_007 }
        return (1...5).map { day in
            let swing = (seed / day + day * 7) % 7 - 3
            let high = city.temperature + 3 + swing
            return DayForecast(day: day, high: high, low: high - 6 - (seed + day) % 4,
                               condition: conditions[(seed + day * 3) % conditions.count])
        }
    }

    /// The city with this id, or the first whose name or pinyin is `text`.
    static func city(named text: String) -> City? {
        cities.first { $0.id == text || $0.name == text || $0.pinyin.lowercased() == text.lowercased() }
    }
}
