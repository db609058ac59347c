import Foundation
#if canImport(Network)
import Network
#endif

/// What the device's connectivity looks like.
/// Thread safety: a value type, safe to share.
public struct NetworkStatus: Sendable, Equatable {
    /// The kind of an interface, where the platform says.
    public enum InterfaceKind: Sendable, Equatable {
        /// Wi-Fi (a wireless interface on Linux).
        case wifi
        /// A cellular modem (Apple platforms).
        case cellular
        /// Ethernet (on Linux, an interface named `e…`).
        case wired
        /// The loopback interface.
        case loopback
        /// Anything else (a VPN, a bridge, a virtual interface).
        case other
    }

    /// Whether traffic can leave the device: an interface other than loopback is up and there
    /// is a route out of it.
    public var isReachable: Bool
    /// The kinds of the interfaces in use (Apple: the path's; Linux: those that are up).
    public var interfaces: [InterfaceKind]
    /// Whether the path is expensive (cellular, a personal hotspot); Apple platforms only.
    public var isExpensive: Bool
    /// Whether the path is constrained (Low Data Mode); Apple platforms only.
    public var isConstrained: Bool

    /// Creates a status.
    public init(isReachable: Bool, interfaces: [InterfaceKind] = [], isExpensive: Bool = false, isConstrained: Bool = false) {
        self.isReachable = isReachable
        self.interfaces = interfaces
        self.isExpensive = isExpensive
        self.isConstrained = isConstrained
    }
}

/// Watches the device's connectivity: the current `status`, its changes as an `AsyncStream`
/// (`updates`) and through closures (`onChange`). Give one to a client
/// (`ClientConfiguration.networkMonitor`) to fail fast or wait while offline.
///
/// Apple platforms use `NWPathMonitor`. On Linux the status is read from the kernel's view in
/// `/sys/class/net` (an interface other than `lo` up) and `/proc/net/route` (a default route),
/// polled every `interval` seconds (2 by default) — a documented fallback: netlink notifications
/// would be immediate. `init(interval:status:)` takes any other source (a test's, a platform's).
/// Thread safety: safe to use from any thread.
public final class NetworkMonitor: Sendable {
    private let current: Locked<NetworkStatus>
    private let changes = Broadcast<NetworkStatus>()
    private let source: Source
    private let queue = DispatchQueue(label: "Tern.NetworkMonitor")

    private enum Source: Sendable {
        case manual
        case polling(SendableTimer, @Sendable () -> NetworkStatus)
        #if canImport(Network)
        case path(PathMonitorBox)
        #endif
    }

    /// The process-wide monitor of the system's connectivity, started on first use.
    public static let system = NetworkMonitor()

    /// A monitor of the system's connectivity.
    public convenience init() {
        #if canImport(Network)
        if #available(iOS 12.0, macOS 10.14, tvOS 12.0, watchOS 5.0, *) {
            self.init(pathMonitor: ())
            return
        }
        #endif
        self.init(interval: 2, status: LinuxNetworkStatus.read)
    }

    /// A monitor that asks `status` every `interval` seconds and reports changes.
    public init(interval: TimeInterval, status: @escaping @Sendable () -> NetworkStatus) {
        self.current = Locked(status())
        let timer = SendableTimer(source: DispatchSource.makeTimerSource(queue: queue))
        self.source = .polling(timer, status)
        timer.source.setEventHandler { [weak self] in self?.update(status()) }
        timer.source.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(100))
        timer.source.resume()
    }

    /// A monitor whose status changes only when `report(_:)` says so: for tests (TernStubs plays
    /// an offline period with one) and for apps with a connectivity source of their own.
    public init(status: NetworkStatus) {
        self.current = Locked(status)
        self.source = .manual
    }

    /// Sets the status of a monitor made with `init(status:)` and tells the change to its
    /// handlers; ignored by monitors that watch the system.
    public func report(_ status: NetworkStatus) {
        guard case .manual = source else { return }
        update(status)
    }

    #if canImport(Network)
    @available(iOS 12.0, macOS 10.14, tvOS 12.0, watchOS 5.0, *)
    private init(pathMonitor: Void) {
        let monitor = NWPathMonitor()
        let box = PathMonitorBox(monitor)
        self.current = Locked(Self.status(of: monitor.currentPath))
        self.source = .path(box)
        monitor.pathUpdateHandler = { [weak self] path in self?.update(Self.status(of: path)) }
        monitor.start(queue: queue)
    }

    @available(iOS 12.0, macOS 10.14, tvOS 12.0, watchOS 5.0, *)
    private static func status(of path: NWPath) -> NetworkStatus {
        var kinds: [NetworkStatus.InterfaceKind] = []
        if path.usesInterfaceType(.wifi) { kinds.append(.wifi) }
        if path.usesInterfaceType(.cellular) { kinds.append(.cellular) }
        if path.usesInterfaceType(.wiredEthernet) { kinds.append(.wired) }
        if path.usesInterfaceType(.loopback) { kinds.append(.loopback) }
        if path.usesInterfaceType(.other) { kinds.append(.other) }
        var constrained = false
        if #available(iOS 13.0, macOS 10.15, tvOS 13.0, watchOS 6.0, *) { constrained = path.isConstrained }
        return NetworkStatus(
            isReachable: path.status == .satisfied, interfaces: kinds, isExpensive: path.isExpensive,
            isConstrained: constrained)
    }
    #endif

    deinit {
        switch source {
        case .manual: break
        case .polling(let timer, _): timer.source.cancel()
        #if canImport(Network)
        case .path(let box): box.cancel()
        #endif
        }
    }

    /// The connectivity now.
    public var status: NetworkStatus { current.withLock { $0 } }

    /// Calls `handler` on the monitor's queue with every change, until the token is released.
    public func onChange(_ handler: @escaping @Sendable (NetworkStatus) -> Void) -> NetworkMonitorToken {
        NetworkMonitorToken(changes.listen(handler) ?? {})
    }

    /// The current status, then every change, until the iteration ends.
    public var updates: AsyncStream<NetworkStatus> {
        changes.stream(first: [status])
    }

    /// Runs `body` once the network is reachable: at once if it is.
    func whenReachable(_ body: @escaping @Sendable () -> Void) {
        let holder = Locked<NetworkMonitorToken?>(nil)
        let fired = Locked(false)
        let fire: @Sendable () -> Void = {
            guard
                fired.withLock({ fired in
                    defer { fired = true }; return !fired
                })
            else { return }
            holder.withLock {
                $0?.cancel(); $0 = nil
            }
            body()
        }
        let token = onChange { if $0.isReachable { fire() } }
        holder.withLock { $0 = token }
        if status.isReachable { fire() }
        if fired.withLock({ $0 }) { token.cancel() }
    }

    private func update(_ new: NetworkStatus) {
        let changed = current.withLock { status in
            defer { status = new }
            return status != new
        }
        if changed { changes.send(new) }
    }
}

/// Keeps an `onChange` handler registered; `cancel()` (or releasing it) removes it.
/// Thread safety: safe to use from any thread.
public final class NetworkMonitorToken: Sendable {
    private let remove: Locked<(@Sendable () -> Void)?>

    init(_ remove: @escaping @Sendable () -> Void) { self.remove = Locked(remove) }

    deinit { cancel() }

    /// Stops the handler.
    public func cancel() {
        remove.withLock { remove in
            defer { remove = nil }; return remove
        }?()
    }
}

#if canImport(Network)
/// An `NWPathMonitor` that can be stored in a `Sendable` type.
// Sendable: NWPathMonitor is thread-safe once started; only `cancel()` is called on it later.
final class PathMonitorBox: @unchecked Sendable {
    private let monitor: NWPathMonitor
    @available(iOS 12.0, macOS 10.14, tvOS 12.0, watchOS 5.0, *)
    init(_ monitor: NWPathMonitor) { self.monitor = monitor }
    func cancel() { monitor.cancel() }
}
#endif

/// Linux: the connectivity the kernel shows in /sys and /proc.
enum LinuxNetworkStatus {
    @Sendable static func read() -> NetworkStatus {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/sys/class/net")) ?? []
        var kinds: [NetworkStatus.InterfaceKind] = []
        var upOutside = false
        for name in names {
            let state = (try? String(contentsOfFile: "/sys/class/net/\(name)/operstate", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
            guard state == "up" || (state == "unknown" && name != "lo") || name == "lo" else { continue }
            if name == "lo" { kinds.append(.loopback); continue }
            let isWireless = FileManager.default.fileExists(atPath: "/sys/class/net/\(name)/wireless")
            kinds.append(isWireless ? .wifi : (name.hasPrefix("e") ? .wired : .other))
            upOutside = true
        }
        // A default route: destination 00000000 in /proc/net/route (IPv4) or ::/0 in ipv6_route.
        let routes = (try? String(contentsOfFile: "/proc/net/route", encoding: .utf8)) ?? ""
        let ipv6 = (try? String(contentsOfFile: "/proc/net/ipv6_route", encoding: .utf8)) ?? ""
        let hasDefault =
            routes.split(separator: "\n").dropFirst().contains { $0.split(separator: "\t").dropFirst().first == "00000000" }
            || ipv6.split(separator: "\n").contains { $0.hasPrefix("00000000000000000000000000000000 00") && !$0.hasSuffix(" lo") }
        return NetworkStatus(isReachable: upOutside && hasDefault, interfaces: kinds)
    }
}
