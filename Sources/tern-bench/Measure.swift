import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

private func selfUsage(children: Bool = false) -> rusage {
    var usage = rusage()
    #if os(Linux)
    getrusage(__rusage_who_t(children ? RUSAGE_CHILDREN.rawValue : RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(children ? RUSAGE_CHILDREN : RUSAGE_SELF, &usage)
    #endif
    return usage
}

/// Process CPU time (user + system, all threads) in seconds, from getrusage; with `children`,
/// that of the child processes waited for so far.
func cpuSeconds(children: Bool = false) -> Double {
    let usage = selfUsage(children: children)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// Peak resident set size of this process in MB (VmHWM on Linux, ru_maxrss elsewhere).
func peakRSSMegabytes() -> Double {
    #if os(Linux)
    if let file = fopen("/proc/self/status", "r") {
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        while getline(&line, &capacity, file) > 0 {
            let text = String(cString: line!)
            if text.hasPrefix("VmHWM:") {
                free(line)
                let kilobytes = Double(text.split(separator: " ").dropFirst().first.map(String.init) ?? "") ?? 0
                return kilobytes / 1024
            }
        }
        free(line)
    }
    #endif
    let usage = selfUsage()
    #if canImport(Darwin)
    return Double(usage.ru_maxrss) / 1_048_576
    #else
    return Double(usage.ru_maxrss) / 1024
    #endif
}

/// Monotonic seconds.
func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

extension Array where Element == Double {
    /// The median (mean of the middle two for an even count).
    var median: Double { percentile(50) }

    /// Nearest-rank percentile, `p` in 0...100.
    func percentile(_ p: Double) -> Double {
        guard !isEmpty else { return .nan }
        let sorted = self.sorted()
        if p == 50 && sorted.count.isMultiple(of: 2) {
            return (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
        }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
        return sorted[Swift.min(Swift.max(rank, 0), sorted.count - 1)]
    }
}

/// Current resident set size in KB: VmRSS on Linux, the task's resident size on Darwin.
func currentRSSKilobytes() -> Double {
    #if canImport(Darwin)
    var info = mach_task_basic_info()
    var count = mach_msg_type_number_t(MemoryLayout<mach_task_basic_info>.size / MemoryLayout<natural_t>.size)
    let result = withUnsafeMutablePointer(to: &info) { pointer in
        pointer.withMemoryRebound(to: integer_t.self, capacity: Int(count)) {
            // task_self_trap(): the `mach_task_self_` global is not concurrency-safe in Swift 6.
            task_info(task_self_trap(), task_flavor_t(MACH_TASK_BASIC_INFO), $0, &count)
        }
    }
    return result == KERN_SUCCESS ? Double(info.resident_size) / 1024 : .nan
    #elseif os(Linux)
    guard let file = fopen("/proc/self/status", "r") else { return .nan }
    defer { fclose(file) }
    var line: UnsafeMutablePointer<CChar>?
    var capacity = 0
    defer { free(line) }
    while getline(&line, &capacity, file) > 0 {
        let text = String(cString: line!)
        if text.hasPrefix("VmRSS:") {
            return Double(text.split(separator: " ").dropFirst().first.map(String.init) ?? "") ?? .nan
        }
    }
    return .nan
    #else
    return .nan
    #endif
}
