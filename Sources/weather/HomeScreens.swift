import Foundation

/// The home screen's rows as they arrive from concurrent cache-then-network requests: the first
/// value of each city (cached or final) for the cached screen, and the final value of each.
// Sendable: every property is only touched under `lock`.
final class HomeScreens: @unchecked Sendable {
    private let lock = NSLock()
    private var first: [String?]
    private var final: [String?]
    private var waiter: CheckedContinuation<[String]?, Never>?
    private var firstDelivered = false

    init(count: Int) {
        first = Array(repeating: nil, count: count)
        final = Array(repeating: nil, count: count)
    }

    /// Records a row for city `index`: a cached one (`final` false) or its final one.
    func record(_ index: Int, _ row: String, final isFinal: Bool) {
        lock.lock()
        if first[index] == nil { first[index] = row }
        if isFinal { final[index] = row }
        let ready = takeReadyScreen()
        lock.unlock()
        if let (waiter, screen) = ready { waiter.resume(returning: screen) }
    }

    /// The first screen, when every city has a row; nil when no row was a cached one (nothing
    /// to show before the final screen).
    func firstScreen() async -> [String]? {
        await withCheckedContinuation { continuation in
            lock.lock()
            waiter = continuation
            let ready = takeReadyScreen()
            lock.unlock()
            if let (waiter, screen) = ready { waiter.resume(returning: screen) }
        }
    }

    /// The final rows, in favourites order.
    func finalRows() -> [String] {
        lock.lock()
        defer { lock.unlock() }
        return final.map { $0 ?? "?" }
    }

    private func takeReadyScreen() -> (CheckedContinuation<[String]?, Never>, [String]?)? {
        guard !firstDelivered, let waiter, !first.contains(where: { $0 == nil }) else { return nil }
        firstDelivered = true
        self.waiter = nil
        let rows = first.compactMap { $0 }
        // Only worth a screen if some row came from the cache before its final answer.
        let anyCached = zip(first, final).contains { $0.0 != $0.1 } || rows.contains { $0.hasSuffix("· cached") }
        return (waiter, anyCached ? rows : nil)
    }
}
