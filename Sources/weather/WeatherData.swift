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

    static let favourites = ["101010100", "101020100", "101280101", "101050101"]
}
