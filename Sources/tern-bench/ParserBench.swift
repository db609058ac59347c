import Foundation
import Tern

/// JSON parsing and decoding, CPU-bound, in one process: Tern's parser (`JSON(data:)`) against
/// `JSONSerialization` on a 1 MB document (MB/s), and Tern's decoder (the `Decodable` path of a
/// `Request<T>`) against `JSONDecoder` on a 1 KB and a 100 KB payload. CPU time, medians of `rounds`.
enum ParserBench {
    /// One city of the generated documents.
    struct City: Codable, Sendable {
        let id: Int
        let name: String
        let province: String
        let latitude: Double
        let longitude: Double
        let tags: [String]
        let current: Current?
    }

    struct Current: Codable, Sendable {
        let temperature: Int
        let condition: String
        let observed: String
    }

    /// A JSON array of cities, about `bytes` long.
    static func document(bytes: Int) -> Data {
        var cities: [City] = []
        var size = 2
        var index = 0
        while size < bytes {
            let city = City(
                id: 101_010_100 + index, name: "城市 \(index) \"q\"", province: "Province \(index % 34)",
                latitude: 39.9 + Double(index % 100) / 7, longitude: 116.4 - Double(index % 90) / 3,
                tags: ["north", "capital-\(index % 5)"],
                current: index % 3 == 0
                    ? nil : Current(temperature: index % 40 - 10, condition: "light rain", observed: "2026-12-01T08:00:00Z"))
            size += ((try? JSONEncoder().encode(city))?.count ?? 0) + 1
            cities.append(city)
            index += 1
        }
        return (try? JSONEncoder().encode(cities)) ?? Data()
    }

    static func run(rounds: Int) {
        func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
        func rate(_ label: String, unit: String, repeats: Int, _ body: () -> Void) -> Double {
            body()  // warm up
            let perSecond = median(
                (0..<rounds).map { _ in
                    let cpu = cpuSeconds()
                    for _ in 0..<repeats { body() }
                    return Double(repeats) / (cpuSeconds() - cpu)
                })
            print(label.padding(toLength: 44, withPad: " ", startingAt: 0) + String(format: "%12.1f ", perSecond) + unit)
            return perSecond
        }
        let big = document(bytes: 1 << 20)
        let megabytes = Double(big.count) / 1e6
        let tern = rate("JSON(data:), 1 MB document", unit: "parses/s", repeats: 10) { _ = try? JSON(data: big) }
        let foundation = rate("JSONSerialization, 1 MB document", unit: "parses/s", repeats: 10) {
            _ = try? JSONSerialization.jsonObject(with: big)
        }
        print(
            "parser throughput".padding(toLength: 44, withPad: " ", startingAt: 0)
                + String(format: "%12.1f MB/s (JSONSerialization %.1f MB/s)", tern * megabytes, foundation * megabytes))
        // The Decodable path of a `Request<T>` (Tern's decoder) against JSONDecoder on the same
        // bytes and type, alternating batch by batch (the ratio is the median of each round's),
        // and parsing them into `JSON` for scale.
        for size in [1_000, 100_000] {
            let data = document(bytes: size)
            let decoder = JSONDecoder()
            let repeats = max(10, 200_000 / size)
            func batch(_ body: () -> Void) -> Double {
                let cpu = cpuSeconds()
                for _ in 0..<repeats { body() }
                return Double(repeats) / (cpuSeconds() - cpu)
            }
            let foundationDecode = { _ = try? decoder.decode([City].self, from: data) }
            let ternDecode = { _ = try? ResponseDecoding.decode([City].self, from: data, like: decoder) }
            foundationDecode()
            ternDecode()
            var foundation: [Double] = []
            var tern: [Double] = []
            for _ in 0..<rounds {
                foundation.append(batch(foundationDecode))
                tern.append(batch(ternDecode))
            }
            let label = { (text: String) in text.padding(toLength: 44, withPad: " ", startingAt: 0) }
            print(label("JSONDecoder → [City], \(size / 1000) KB") + String(format: "%12.1f decodes/s", median(foundation)))
            print(label("Tern's decoder → [City], \(size / 1000) KB") + String(format: "%12.1f decodes/s", median(tern)))
            let parsed = rate("JSON(data:), \(size / 1000) KB", unit: "parses/s", repeats: repeats) { _ = try? JSON(data: data) }
            print(label("Tern's decoder ÷ JSONDecoder, \(size / 1000) KB") + String(format: "%12.2f", median(zip(tern, foundation).map(/))))
            print(label("parse ÷ JSONDecoder, \(size / 1000) KB") + String(format: "%12.2f", parsed / median(foundation)))
        }
    }
}
