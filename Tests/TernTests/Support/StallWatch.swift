import Foundation
@testable import Tern
import TernChildProcess

/// A watchdog for the suite, on when `TERN_STALL_WATCH` is set (a number of seconds, default 1):
/// from a thread of its own it hands a tiny job to Swift's global executor and to Dispatch's
/// global queue every 100 ms, and reports on standard error each time one waited longer than
/// that to run. With `TERN_STALL_WATCH_GDB` set to a folder, the first report of a stall also
/// writes every thread's backtrace there (`gdb -p`), which names what holds the threads.
///
/// A stall of the shared threads shows in every test at once: unit tests that take seconds, and
/// timing-bound tests that fail together. This tells such a stall from a slow test.
enum StallWatch {
    /// Starts the watchdog once (when the environment asks for it); any test support touches it.
    static let started: Void = {
        let environment = ProcessInfo.processInfo.environment
        guard let setting = environment["TERN_STALL_WATCH"] else { return }
        let threshold = Double(setting) ?? 1
        let gdbFolder = environment["TERN_STALL_WATCH_GDB"]
        let thread = Thread { watch(threshold: threshold, gdbFolder: gdbFolder) }
        thread.name = "stall-watch"
        thread.start()
    }()

    private static func watch(threshold: Double, gdbFolder: String?) {
        let began = DispatchTime.now().uptimeNanoseconds
        var dumped = 0
        func seconds(_ since: UInt64) -> Double { Double(DispatchTime.now().uptimeNanoseconds - since) / 1e9 }
        while true {
            let sent = DispatchTime.now().uptimeNanoseconds
            let swiftRan = Locked<UInt64?>(nil), dispatchRan = Locked<UInt64?>(nil)
            Task.detached { swiftRan.withLock { $0 = DispatchTime.now().uptimeNanoseconds } }
            DispatchQueue.global().async { dispatchRan.withLock { $0 = DispatchTime.now().uptimeNanoseconds } }
            var reported = false
            while swiftRan.withLock({ $0 }) == nil || dispatchRan.withLock({ $0 }) == nil {
                usleep(10_000)
                if !reported && seconds(sent) > threshold {
                    reported = true
                    let at = Double(sent - began) / 1e9
                    let waiting = [
                        swiftRan.withLock { $0 } == nil ? "Swift's global executor" : nil,
                        dispatchRan.withLock { $0 } == nil ? "Dispatch's global queue" : nil,
                    ].compactMap { $0 }
                    FileHandle.standardError.write(
                        Data(
                            String(
                                format: "stall-watch: at %.1f s, %@ has not run a job for %.1f s\n",
                                at, waiting.joined(separator: " and "), threshold
                            ).utf8))
                    if let gdbFolder, dumped < 5 {
                        dumped += 1
                        backtraces(into: gdbFolder, label: String(format: "%.1f", at))
                    }
                }
            }
            let swiftWait = Double((swiftRan.withLock { $0 } ?? sent) - sent) / 1e9
            let dispatchWait = Double((dispatchRan.withLock { $0 } ?? sent) - sent) / 1e9
            if swiftWait > threshold || dispatchWait > threshold {
                FileHandle.standardError.write(
                    Data(
                        String(
                            format: "stall-watch: at %.1f s, a job waited %.1f s (Swift) / %.1f s (Dispatch)\n",
                            Double(sent - began) / 1e9, swiftWait, dispatchWait
                        ).utf8))
            }
            usleep(100_000)
        }
    }

    /// Every thread's backtrace, written by gdb to `<folder>/stall-<label>.txt`.
    private static func backtraces(into folder: String, label: String) {
        #if os(Linux) || os(macOS)
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["gdb", "-p", String(getpid()), "-batch", "-ex", "thread apply all bt 30"]
        let path = folder + "/stall-\(getpid())-\(label).txt"
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        let file = FileHandle(forWritingAtPath: path)
        process.standardOutput = file.map { .file($0) } ?? .discard
        process.standardError = .discard
        try? process.run()
        process.waitUntilExit()
        #endif
    }
}
