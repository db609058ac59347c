import Foundation
import Tern

/// Favourites changed on this device reach the server through an `Outbox`: `fav add` works offline
/// (`--offline`, or the server stopped) and syncs when the server is back, in this run or a later
/// one; `weather outbox` lists what waits.
struct FavouriteSync {
    let outbox: Outbox?

    /// Opens the outbox in `directory`/outbox; sends what an earlier run left there.
    init(api: Client, directory: URL) {
        var configuration = OutboxConfiguration()
        configuration.directory = directory.appendingPathComponent("outbox")
        configuration.initialRetryDelay = 0.5
        configuration.maximumRetryDelay = 30
        do {
            outbox = try Outbox(client: api, configuration: configuration)
        } catch {
            print("weather: the outbox cannot open: \(error)")
            outbox = nil
        }
    }

    /// Stores a change for the server: `POST v1/favourites {"city": id, "action": add|remove}`.
    func record(_ action: String, cityID: String) -> Bool {
        guard let outbox else { return false }
        var request = Request<Data>("v1/favourites", method: .post, body: .json(["city": cityID, "action": action]))
        request.group = WeatherAPI.group
        do {
            try outbox.enqueue(request, orderingGroup: "favourites")
            return true
        } catch {
            print("weather: cannot keep the change for the server: \(error)")
            return false
        }
    }

    /// Waits up to `seconds` for the waiting changes to reach the server; returns how many still wait.
    func settle(seconds: Double) async -> Int {
        guard let outbox else { return 0 }
        // Offline: nothing will be sent now, so there is nothing to wait for.
        if outbox.client.configuration.networkMonitor?.status.isReachable == false { return outbox.pendingCount }
        let end = Date().addingTimeInterval(seconds)
        while outbox.pendingCount > 0, Date() < end { try? await Task.sleep(nanoseconds: 50_000_000) }
        return outbox.pendingCount
    }

    /// One line on where the changes stand, after a `fav add` or `fav remove`.
    func report(pending: Int) {
        if pending == 0 {
            print("Synced with the server.")
        } else {
            print("Saved on this device; \(pending) change\(pending == 1 ? "" : "s") will sync when the server is back (weather outbox).")
        }
    }

    /// `weather outbox`: every change waiting, failed or recently delivered.
    func list() {
        guard let outbox else { return }
        let items = outbox.items
        let time = DateFormatter()
        time.dateFormat = "MM-dd HH:mm:ss"
        print("Outbox (\(outbox.directory.path)): \(outbox.pendingCount) waiting")
        for item in items {
            let body = item.url.path
            let state: String =
                switch item.state {
                case .queued: item.attempts == 0 ? "waiting" : "waiting (\(item.attempts) tries; \(item.lastError ?? "no answer"))"
                case .sending: "sending"
                case .delivered(let code): "delivered (HTTP \(code))"
                case .failed(let failure): "failed: \(failure)"
                }
            print("  \(time.string(from: item.enqueuedAt))  \(item.method) \(body)  \(state)")
        }
    }
}
