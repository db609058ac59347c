// Child processes exist on macOS and Linux only.
#if os(macOS) || os(Linux)
#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#endif
import Foundation

// The spawn types: opaque pointers on Darwin (nil until initialised), structures in glibc.
#if canImport(Darwin)
typealias FileActions = posix_spawn_file_actions_t?
typealias SpawnAttributes = posix_spawnattr_t?
#else
typealias FileActions = posix_spawn_file_actions_t
typealias SpawnAttributes = posix_spawnattr_t
#endif

/// A child process for the package's tests and tools, started with `posix_spawn`: the part of
/// Foundation's `Process` they use, without its Linux crash.
///
/// On Linux, `Process.run()` looks for the highest open descriptor by reading `/proc/self/fd`,
/// copying a fixed 256 bytes of each directory entry's name. An entry at the end of the reading
/// buffer then reads past it, and when the next page is not mapped the whole process dies
/// (`Bad pointer dereference` in `memcpy`, under `Process.run()`), at random, more often the more
/// processes a test run starts. This starts the child without that scan: every descriptor above
/// standard error is closed in the child (`closefrom` as a spawn action on Linux,
/// `POSIX_SPAWN_CLOEXEC_DEFAULT` on macOS), signal handling and the signal mask are reset.
///
/// Set it up, then `run()` once. Thread safety: set the properties before `run()`; after it,
/// the process can be watched, signalled and waited for from any thread.
// Sendable: the settings are only written before `run()`, by one thread; what changes after
// (the process identifier, once, and the exit status) is guarded by `state`.
public final class ChildProcess: @unchecked Sendable {
    /// Where one of the child's output streams goes.
    public enum Output {
        /// The parent's own stream.
        case inherit
        /// `/dev/null`.
        case discard
        /// The pipe's writing end; the parent's copy of it is closed once the child runs, so
        /// reading the other end ends when the child (and whatever it started) closes it.
        case pipe(Pipe)
        /// An open file.
        case file(FileHandle)
    }

    /// How the child ended.
    public enum TerminationReason: Sendable, Equatable {
        /// It exited: `terminationStatus` is its exit status.
        case exit
        /// A signal ended it: `terminationStatus` is the signal's number.
        case uncaughtSignal
    }

    /// The program to run.
    public var executableURL: URL?
    /// Its arguments, after its own name.
    public var arguments: [String] = []
    /// Its whole environment; nil: this process's.
    public var environment: [String: String]?
    /// Where its standard output goes.
    public var standardOutput = Output.inherit
    /// Where its standard error goes.
    public var standardError = Output.inherit

    private struct State {
        var pid: pid_t = 0
        var status: (reason: TerminationReason, code: Int32)?
    }
    private let state = NSLock()
    private var guarded = State()
    /// Held while a thread waits for the child in `waitUntilExit`.
    private let reaping = NSLock()

    /// A process to set up and `run()`.
    public init() {}

    /// The child's process identifier; 0 before `run()`.
    public var processIdentifier: Int32 { withState { $0.pid } }

    /// Starts the child; throws the system's error if it cannot be started.
    public func run() throws {
        guard let executableURL else { throw POSIXError(.ENOENT) }
        #if canImport(Darwin)
        var actions: FileActions = nil
        var attributes: SpawnAttributes = nil
        #else
        var actions = FileActions()
        var attributes = SpawnAttributes()
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        try redirect(standardOutput, to: STDOUT_FILENO, in: &actions)
        try redirect(standardError, to: STDERR_FILENO, in: &actions)
        var flags = Int32(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK)
        #if canImport(Darwin)
        flags |= Int32(POSIX_SPAWN_CLOEXEC_DEFAULT)
        #else
        try Self.closeInheritedDescriptors(in: &actions)
        #endif
        var everySignal = sigset_t()
        sigfillset(&everySignal)
        var noSignal = sigset_t()
        sigemptyset(&noSignal)
        posix_spawnattr_setsigdefault(&attributes, &everySignal)
        posix_spawnattr_setsigmask(&attributes, &noSignal)
        posix_spawnattr_setflags(&attributes, Int16(flags))

        let argv = ([executableURL.path] + arguments).map { strdup($0) } + [nil]
        let variables = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            variables.forEach { free($0) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executableURL.path, &actions, &attributes, argv, variables)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL) }
        withState { $0.pid = pid }
        for output in [standardOutput, standardError] {
            if case .pipe(let pipe) = output { try? pipe.fileHandleForWriting.close() }
        }
    }

    /// Runs the child to its end and returns what it wrote to standard output, and to standard
    /// error as well with `errorsToo` (both through one pipe), as UTF-8. Blocks until the child
    /// has exited and the pipe is closed: call it off shared threads.
    public func runReadingOutput(errorsToo: Bool = false) throws -> String {
        let pipe = Pipe()
        standardOutput = .pipe(pipe)
        if errorsToo { standardError = .pipe(pipe) }
        try run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    /// Whether the child has not ended yet (false before `run()`).
    public var isRunning: Bool {
        withState { state in
            guard state.pid > 0, state.status == nil else { return false }
            var status: Int32 = 0
            switch waitpid(state.pid, &status, WNOHANG) {
            case 0: return true
            case state.pid: state.status = Self.decode(status)
            default: state.status = (.exit, -1)  // no such child any more
            }
            return false
        }
    }

    /// Blocks until the child has ended (at once before `run()`).
    public func waitUntilExit() {
        reaping.lock()
        defer { reaping.unlock() }
        while true {
            let pid = withState { $0.status == nil ? $0.pid : 0 }
            guard pid > 0 else { return }
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, 0)
            if reaped == -1, errno == EINTR { continue }
            withState { state in
                // `isRunning` may have collected the status meanwhile.
                if state.status == nil { state.status = reaped == pid ? Self.decode(status) : (.exit, -1) }
            }
        }
    }

    /// The exit status, or the number of the signal that ended the child; -1 while it runs.
    public var terminationStatus: Int32 { withState { $0.status?.code ?? -1 } }

    /// How the child ended; `.exit` while it runs.
    public var terminationReason: TerminationReason { withState { $0.status?.reason ?? .exit } }

    /// Sends `SIGTERM`.
    public func terminate() {
        signal(SIGTERM)
    }

    /// Sends `signal` to the child, if it has not been waited for yet.
    public func signal(_ signal: Int32) {
        withState { state in
            if state.pid > 0, state.status == nil { kill(state.pid, signal) }
        }
    }

    private func withState<Result>(_ body: (inout State) -> Result) -> Result {
        state.lock()
        defer { state.unlock() }
        return body(&guarded)
    }

    private func redirect(_ output: Output, to descriptor: Int32, in actions: inout FileActions) throws {
        let status: Int32
        switch output {
        case .inherit: return
        case .discard: status = posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", O_WRONLY, 0)
        case .pipe(let pipe): status = posix_spawn_file_actions_adddup2(&actions, pipe.fileHandleForWriting.fileDescriptor, descriptor)
        case .file(let handle): status = posix_spawn_file_actions_adddup2(&actions, handle.fileDescriptor, descriptor)
        }
        guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EINVAL) }
    }

    private static func decode(_ status: Int32) -> (reason: TerminationReason, code: Int32) {
        let signal = status & 0x7F
        return signal == 0 ? (.exit, (status >> 8) & 0xFF) : (.uncaughtSignal, signal)
    }

    #if !canImport(Darwin)
    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
    /// module does not declare.
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    private static let closeFrom: CloseFrom? = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np")
        .map { unsafeBitCast($0, to: CloseFrom.self) }

    /// Closes every descriptor above standard error in the child: with `closefrom` where glibc
    /// has it, else one by one, for each open descriptor (read from `/proc/self/fd` by name,
    /// without copying more of an entry than it holds).
    private static func closeInheritedDescriptors(in actions: inout FileActions) throws {
        if let closeFrom {
            let status = closeFrom(&actions, 3)
            guard status == 0 else { throw POSIXError(POSIXErrorCode(rawValue: status) ?? .EINVAL) }
            return
        }
        guard let directory = opendir("/proc/self/fd") else { return }
        defer { closedir(directory) }
        let nameOffset = MemoryLayout<dirent>.offset(of: \dirent.d_name) ?? 19
        var open: [Int32] = []
        while let entry = readdir(directory) {
            let name = String(cString: (UnsafeRawPointer(entry) + nameOffset).assumingMemoryBound(to: CChar.self))
            if let descriptor = Int32(name), descriptor > 2 { open.append(descriptor) }
        }
        // The directory's own descriptor is in the list; closing it in the child does no harm.
        for descriptor in open { posix_spawn_file_actions_addclose(&actions, descriptor) }
    }
    #endif
}
#endif
