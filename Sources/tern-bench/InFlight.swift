import Foundation

/// Client memory per request in flight: RSS with `count` requests waiting on a URL that answers
/// at one byte per second, minus RSS before, divided by `count`.
enum InFlight {
    static func measure(_ driver: any Driver, baseURL: String, count: Int) async -> Double {
        for _ in 0..<20 { _ = await driver.get(baseURL + "/tiny.json") }
        try? await Task.sleep(nanoseconds: 200_000_000)
        let before = currentRSSKilobytes()
        for _ in 0..<count {
            Task.detached { _ = await driver.get(baseURL + "/slow/1k.json") }
        }
        try? await Task.sleep(nanoseconds: 2_000_000_000)
        let after = currentRSSKilobytes()
        // The process exits with the requests still in flight: nothing is cancelled, so no
        // cancellation path is measured or raced.
        return (after - before) / Double(count)
    }
}
