import Foundation
import Tern
import TernStubs

/// The offline weather API: `WeatherData` served through TernStubs with realistic latency, so
/// `weather` runs on a fresh machine with no network. `scripts/weather_server.py` serves the same
/// API over real HTTP from the same data (`weather export-data`).
///
/// - `GET /v1/weather?city=<id>`: one city's current weather (404 for an unknown city);
/// - `GET /v1/forecast?city=<id>`: its five-day forecast;
/// - `GET /v1/search?q=<text>`: the cities whose name, pinyin or province match;
/// - `GET /v1/radar`: the rain radar image (`Radar.image()`), about 300 KB over two seconds;
///   `Range: bytes=N-` with `If-Range` (its ETag) gets the rest;
/// - WebSocket `/v1/live`: after `{"subscribe": [ids]}`, a reading per city every half second;
///   the server restarts after four rounds (a 1001 close frame, as a deploy sends).
enum EmbeddedWeatherServer {
    static func makeTransport() -> StubTransport {
        let stubs = StubTransport()
        stubs.stub(.get("/v1/weather")) { request in
            guard let city = city(in: request) else { return unknownCity() }
            return StubResponse.json(WeatherReply(code: 0, city: city, observed: WeatherReply.now())).delayed(by: latency())
        }
        stubs.stub(.get("/v1/forecast")) { request in
            guard let city = city(in: request) else { return unknownCity() }
            return StubResponse.json(ForecastReply(code: 0, city: city, days: WeatherData.forecast(for: city))).delayed(by: latency())
        }
        stubs.stub(.get("/v1/search")) { request in
            let text = (query(request, "q") ?? "").lowercased()
            return StubResponse.json(SearchReply(code: 0, cities: WeatherData.cities.filter { $0.matches(text) })).delayed(by: latency())
        }
        let radar = Radar.image()
        stubs.stub(.get("/v1/radar")) { request in
            // Like a real server: the rest of the image for `Range: bytes=N-` while `If-Range` matches.
            var reply = StubResponse.data(radar, contentType: "image/x-portable-graymap")
            reply.headers["ETag"] = Radar.etag
            if let range = request.value(forHTTPHeaderField: "Range"), request.value(forHTTPHeaderField: "If-Range") == Radar.etag,
                let start = Int(range.dropFirst("bytes=".count).dropLast()), range.hasPrefix("bytes="), range.hasSuffix("-"),
                start < radar.count
            {
                reply.status = 206
                reply.body = radar.suffix(from: start)
                reply.headers["Content-Range"] = "bytes \(start)-\(radar.count - 1)/\(radar.count)"
            }
            return reply.delayed(by: 0.1).chunked(into: max(1, reply.body.count * 40 / radar.count), every: 0.05)
        }
        // Favourites changed on a device: one change per Idempotency-Key, however often it is sent.
        let changes = ChangeKeys()
        stubs.stub(.post("/v1/favourites")) { request in
            let isNew = changes.insert(request.value(forHTTPHeaderField: "Idempotency-Key") ?? UUID().uuidString)
            var reply = StubResponse.json(["code": 0, "replayed": !isNew])
            reply.status = 201
            return reply.delayed(by: latency())
        }
        stubs.stubWebSocket(.get("/v1/live"), StubWebSocket { message in liveReadings(for: message) })
        return stubs
    }

    /// The answer to a subscription: four rounds of readings half a second apart, then a restart
    /// as a real server does one: a close frame with 1001, going away.
    private static func liveReadings(for message: WebSocketMessage) -> [StubWebSocket.Action] {
        guard case .text(let text) = message, let subscription = try? JSONDecoder().decode(LiveSubscription.self, from: Data(text.utf8))
        else { return [.close(.unsupportedData, reason: "send {\"subscribe\": [city ids]}")] }
        let cities = subscription.subscribe.compactMap { id in WeatherData.cities.first { $0.id == id } }
        var actions: [StubWebSocket.Action] = []
        for round in 0..<4 {
            actions.append(.wait(round == 0 ? 0.1 : 0.5))
            let observed = WeatherReply.now(after: 0.1 + 0.5 * Double(round))
            for city in cities {
                let reading = LiveReading(
                    city: city.id, temperature: Double(city.temperature) + Double.random(in: -1.5...1.5), observed: observed)
                actions.append(.send(.text(String(decoding: (try? JSONEncoder().encode(reading)) ?? Data(), as: UTF8.self))))
            }
        }
        return actions + [.wait(0.3), .close(.goingAway, reason: "restarting")]
    }

    private static func city(in request: URLRequest) -> City? {
        WeatherData.cities.first { $0.id == query(request, "city") }
    }

    private static func unknownCity() -> StubResponse {
        StubResponse.json(text: #"{"code": 404, "message": "unknown city"}"#, status: 404).delayed(by: latency())
    }

    private static func query(_ request: URLRequest, _ name: String) -> String? {
        request.url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: false) }?.queryItems?.first { $0.name == name }?.value
    }

    /// 30–120 ms, like a phone on a decent network.
    private static func latency() -> TimeInterval { Double.random(in: 0.03...0.12) }
}

/// The idempotency keys of the favourite changes the embedded server applied.
// Sendable: `keys` is only touched under `lock`.
private final class ChangeKeys: @unchecked Sendable {
    private let lock = NSLock()
    private var keys = Set<String>()

    /// Whether `key` is new (its change takes effect).
    func insert(_ key: String) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        return keys.insert(key).inserted
    }
}
