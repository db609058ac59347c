import Foundation
import Tern

/// A tiny in-process weather server behind Tern's transport seam, so `weather` runs offline.
///
/// Serves `GET /v1/weather?city=<id>` and `GET /v1/search?q=<text>` from `WeatherData`, each answer
/// after a short, realistic delay. (The full showcase will use the TernStubs product instead.)
struct EmbeddedWeatherTransport: Transport {
    func start(_ request: URLRequest, events: @escaping @Sendable (TransportEvent) -> Void) -> (any TransportTask)? {
        let task = EmbeddedTask()
        let (status, body) = Self.answer(request)
        let delay = Double.random(in: 0.03...0.12)
        DispatchQueue.global().asyncAfter(deadline: .now() + delay) {
            guard !task.isCancelled, let url = request.url,
                  let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1",
                                                 headerFields: ["Content-Type": "application/json"])
            else { return events(.completed(URLError(.cancelled))) }
            events(.response(response))
            events(.data(body))
            events(.completed(nil))
        }
        return task
    }

    func invalidate() {}

    private static func answer(_ request: URLRequest) -> (Int, Data) {
        guard let url = request.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return (400, Data(#"{"code": 400, "message": "bad request"}"#.utf8))
        }
        let query = Dictionary((components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        switch components.path {
        case "/v1/weather":
            guard let city = WeatherData.cities.first(where: { $0.id == query["city"] }) else {
                return (404, Data(#"{"code": 404, "message": "unknown city"}"#.utf8))
            }
            return (200, (try? JSONEncoder().encode(WeatherReply(code: 0, city: city))) ?? Data())
        case "/v1/search":
            let text = (query["q"] ?? "").lowercased()
            let found = WeatherData.cities.filter { $0.matches(text) }
            return (200, (try? JSONEncoder().encode(SearchReply(code: 0, cities: found))) ?? Data())
        default:
            return (404, Data(#"{"code": 404, "message": "no such endpoint"}"#.utf8))
        }
    }
}

/// Cancellation flag for one embedded request.
final class EmbeddedTask: TransportTask, @unchecked Sendable {
    // Sendable: `cancelled` is only touched while holding `lock`.
    private let lock = NSLock()
    private var cancelled = false
    var isCancelled: Bool { lock.withLock { cancelled } }
    func cancel() { lock.withLock { cancelled = true } }
}
