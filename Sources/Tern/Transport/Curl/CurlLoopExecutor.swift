#if canImport(Glibc) || canImport(Musl)
import Foundation

/// A `CurlTransport`'s event-loop thread as a Swift task executor (`CurlTransport.taskExecutor`).
///
/// Code that runs under `withTaskExecutorPreference(transport.taskExecutor)` runs on the loop
/// thread between libcurl's turns: a request submitted there reaches libcurl without waking
/// another thread, and its response resumes the awaiting task where libcurl delivered it, without
/// a hop to Swift's global executor. Jobs wait in the transport's inbox beside submissions and
/// cancels, in order; once the transport is invalidated they go to the global executor instead,
/// so no task is ever stranded.
final class CurlLoopExecutor: TaskExecutor {
    private let inbox: Locked<CurlTransport.Inbox>
    private let wakeup: CurlWakeup

    init(inbox: Locked<CurlTransport.Inbox>, wakeup: CurlWakeup) {
        self.inbox = inbox
        self.wakeup = wakeup
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if wakeup.post(to: inbox, { $0.jobs.append(job) }) == nil { Self.runElsewhere(job) }
    }

    /// Hands a job the loop will not run to Swift's global executor.
    static func runElsewhere(_ job: UnownedJob) {
        globalConcurrentExecutor.enqueue(ExecutorJob(job))
    }
}
#endif
