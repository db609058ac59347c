import Foundation

/// Where URLSession differs between Apple platforms and Linux (swift-corelibs-foundation), in one place.
enum Platform {
    /// The idle timeout to give URLSession for a request whose deadline is `seconds`.
    ///
    /// Linux truncates `timeoutInterval` to whole seconds (0.5 s fires at once, 1.5 s after 1 s),
    /// so Tern enforces the deadline with its own timer on every platform and gives URLSession a
    /// whole number of seconds past it, so that Tern's timer is the one that fires.
    static func sessionTimeout(forDeadline seconds: TimeInterval) -> TimeInterval {
        max(1, seconds.rounded(.up) + 1)
    }
}
