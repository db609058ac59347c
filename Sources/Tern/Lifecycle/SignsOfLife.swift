import Foundation

/// When the running attempt of a request last showed life — a response head, a chunk, upload
/// progress — for its idle timeout. Apart from the request's lock: every chunk touches it.
/// Thread safety: safe to use from any thread.
final class SignsOfLife: Sendable {
    /// Uptime (ns) of the last sign of life; 0 before any, `heldByReader` while a streamed body's
    /// reader holds the exchange back (a reader that holds the response back is not an idle server).
    private let last = Locked<UInt64>(0)
    private static let heldByReader = UInt64.max

    /// A sign of life now: the idle timeout counts from here.
    func touch() {
        let now = DispatchTime.now().uptimeNanoseconds
        last.withLock { if $0 != Self.heldByReader { $0 = now } }
    }

    /// A streamed body's reader holds the exchange back (`true`) or lets it go on.
    func setHeldByReader(_ held: Bool) {
        let now = DispatchTime.now().uptimeNanoseconds
        last.withLock { $0 = held ? Self.heldByReader : now }
    }

    /// The last sign of life as of `now` (`now` itself while a reader holds the exchange back);
    /// nil before any.
    func latest(now: DispatchTime) -> DispatchTime? {
        let last = last.withLock { $0 == Self.heldByReader ? now.uptimeNanoseconds : $0 }
        return last == 0 ? nil : DispatchTime(uptimeNanoseconds: last)
    }
}
