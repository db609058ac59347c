import Foundation
import Testing
import TernChildProcess

// Child processes exist on macOS and Linux only.
#if os(macOS) || os(Linux)
/// The tests' and tern-bench's own child processes: output, exit status, signals, and a clean
/// start (no descriptor of this process, no ignored signal carried over).
@Suite struct ChildProcessTests {
    /// Runs `/bin/sh -c script` to its end; its status, how it ended, and what it printed.
    static func shell(_ script: String) async throws -> (status: Int32, reason: ChildProcess.TerminationReason, output: String) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.environment = ["TERN_CHILD_TEST": "yes"]
        process.standardError = .discard
        let output = try await onThreadOfItsOwn { try process.runReadingOutput() }
        return (process.terminationStatus, process.terminationReason, output)
    }

    @Test func itsOutputEnvironmentAndExitStatusComeBack() async throws {
        let run = try await Self.shell("echo \"$TERN_CHILD_TEST\"; echo oops >&2; exit 3")
        #expect(run.output == "yes\n" && run.status == 3 && run.reason == .exit)
    }

    @Test func aSignalThatEndsItIsReportedAsSuch() async throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sleep")
        process.arguments = ["30"]
        try process.run()
        #expect(process.isRunning && process.processIdentifier > 0)
        process.signal(SIGKILL)
        await onThreadOfItsOwn { process.waitUntilExit() }
        #expect(!process.isRunning && process.terminationReason == .uncaughtSignal && process.terminationStatus == SIGKILL)
    }

    /// This process ignores `SIGPIPE` (the libcurl transport does); the child must not.
    @Test func theChildStartsWithDefaultSignalHandling() async throws {
        signal(SIGPIPE, SIG_IGN)
        let run = try await Self.shell("kill -PIPE $$; echo survived")
        #expect(run.reason == .uncaughtSignal && run.status == SIGPIPE && run.output.isEmpty)
    }

    #if os(Linux)
    /// Descriptors this process has open (here 40 files) stay out of the child: a pipe another
    /// test reads would otherwise stay open for as long as the child runs.
    @Test func theChildInheritsNoDescriptorBeyondItsStandardStreams() async throws {
        let files = (0..<40).map { _ in open("/dev/null", O_RDONLY) }
        defer { files.forEach { close($0) } }
        let run = try await Self.shell("ls /proc/$$/fd")
        let inherited = run.output.split(separator: "\n").compactMap { Int32($0) }.filter { $0 > 2 }
        // The shell's own `ls` sees the shell's descriptors; a shell may keep one of its own open.
        #expect(inherited.count <= 1, "\(run.output)")
    }
    #endif
}
#endif
