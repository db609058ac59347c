import Foundation
import Tern

/// `{"subscribe": [city ids]}`: what the live screen sends when its socket opens.
struct LiveSubscription: Codable, Sendable {
    let subscribe: [String]
}

/// One pushed temperature: `{"city": id, "temperature": 3.4, "observed": "14:03:21"}`.
struct LiveReading: Codable, Sendable {
    let city: String
    let temperature: Double
    let observed: String
}

/// `weather live`: the favourites' temperatures as the server pushes them over a WebSocket
/// (`/v1/live`), one line per reading. The socket reconnects when the server restarts (the
/// embedded one does every few seconds) and subscribes again each time it opens; the screen ends
/// after `readings` readings, or when the socket ends for good.
enum LiveScreen {
    static func run(api: Client, cityIDs: [String], readings: Int) async -> Int32 {
        print("Live temperatures, as the server pushes them (\(readings) readings):")
        let subscription = String(decoding: (try? JSONEncoder().encode(LiveSubscription(subscribe: cityIDs))) ?? Data(), as: UTF8.self)
        let seen = Locked(0)
        let options = WebSocketOptions(pingInterval: 5, reconnect: WebSocketReconnectPolicy(maxAttempts: 5, baseDelay: 0.3))
        let ending: WebSocketEnding = await withCheckedContinuation { continuation in
            let finished = Locked(false)
            let finish: @Sendable (WebSocketEnding) -> Void = { ending in
                let first = finished.withLock { finished in
                    defer { finished = true }
                    return !finished
                }
                if first { continuation.resume(returning: ending) }
            }
            api.webSocket(WeatherAPI.Live(), options: options) { socket, event in
                switch event {
                case .opened:
                    print("  ● connected — subscribing to \(cityIDs.count) cities")
                    socket.send(subscription) { error in
                        if let error { print("  ✗ could not subscribe: \(WeatherApp.explain(error))") }
                    }
                case .message(.text(let text)):
                    guard let reading = try? JSONDecoder().decode(LiveReading.self, from: Data(text.utf8)) else { return }
                    let count = seen.withLock { seen in
                        if seen < readings { seen += 1 }
                        return seen
                    }
                    guard count <= readings else { return }
                    print("  " + line(for: reading))
                    if count == readings { socket.close() }
                case .message:
                    break
                case .reconnecting(let attempt, let delay):
                    print(String(format: "  ○ the server went away — reconnecting (attempt %d) in %.1f s", attempt, delay))
                case .ended(let ending):
                    finish(ending)
                }
            }
        }
        switch ending {
        case .closed:
            print("Done: \(seen.withLock { $0 }) readings.")
            return 0
        // The refusal as the status, or as the server's 404 body once the business rule read it.
        case .failed(let error) where error.statusCode == 404 || error.businessError?.code == 404:
            print("The live feed ended: this server has no live feed (HTTP 404 for /v1/live)")
            return 1
        case .failed(let error):
            print("The live feed ended: \(WeatherApp.explain(error))")
            return 1
        }
    }

    /// `北京 Beijing (北京)        3.4°C  at 14:03:21`.
    static func line(for reading: LiveReading) -> String {
        let name = WeatherData.city(named: reading.city).map { "\($0.name) \($0.pinyin) (\($0.province))" } ?? reading.city
        return WeatherApp.padded(name, to: 30) + String(format: "%5.1f°C  at ", reading.temperature) + reading.observed
    }
}
