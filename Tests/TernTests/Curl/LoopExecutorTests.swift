import Foundation
import Testing
@testable import Tern

#if os(Linux)
/// `Client.taskExecutor`: a task that prefers the libcurl loop's executor sends and resumes on the
/// loop thread, can be cancelled, survives the client's invalidation, and shares the thread with
/// other such tasks and with ordinary callers.
@Suite struct LoopExecutorTests {
    static func client() throws -> Client {
        let transport = try #require(CurlTransport.make(), "libcurl: \(CurlTransport.unavailableReason ?? "?")")
        return Client(baseURL: try TestServers.fixture()) { $0.transport = transport }
    }

    /// The request's outcome as a value.
    static func result<Value>(_ client: Client, _ request: Request<Value>) async -> Result<Response<Value>, TernError> {
        do { return .success(try await client.send(request)) } catch { return .failure(error) }
    }

    /// The client's loop thread: where a job enqueued on its executor runs. (Not where an
    /// `.immediate` completion runs: one that arrives before `send` has returned, as on a loaded
    /// machine, is handed to another queue.)
    static func loopThread(of client: Client) async throws -> pthread_t {
        let executor = try #require(client.taskExecutor)
        return await Task(executorPreference: executor) { pthread_self() }.value
    }

    /// Whether the caller runs on `loop`.
    static func onLoop(_ loop: pthread_t) -> Bool { pthread_equal(pthread_self(), loop) != 0 }

    @Test func requestsFromATaskOnTheLoopResumeOnTheLoopThread() async throws {
        let client = try Self.client()
        defer { client.invalidate() }
        let executor = try #require(client.taskExecutor)
        let loop = try await Self.loopThread(of: client)
        let onLoop = try await withTaskExecutorPreference(executor) { () async throws -> [Bool] in
            var onLoop = [Self.onLoop(loop)]
            for index in 0..<20 {
                let response = try await client.send(Request<JSON>("json", query: ["n": index]))
                #expect(response.statusCode == 200)
                onLoop.append(Self.onLoop(loop))
            }
            return onLoop
        }
        #expect(onLoop.allSatisfy { $0 }, "\(onLoop)")
        // A task without the preference resumes elsewhere. (A fresh task: this one may still be
        // on the loop thread right after leaving the preference, until it next suspends.)
        let elsewhere = try await Task.detached {
            _ = try await client.send(Request<JSON>("json"))
            return !Self.onLoop(loop)
        }.value
        #expect(elsewhere)
    }

    @Test func cancellingATaskOnTheLoopCancelsItsRequest() async throws {
        let client = try Self.client()
        defer { client.invalidate() }
        let executor = try #require(client.taskExecutor)
        let task = Task {
            await withTaskExecutorPreference(executor) { () async -> (Result<Response<Data>, TernError>, ended: Date) in
                (await Self.result(client, Request<Data>("stall", query: ["seconds": 5])), Date())
            }
        }
        try await Task.sleep(milliseconds: 100)
        let began = Date()
        task.cancel()
        // Timed where the task saw its result: this test's own resumption can wait seconds for a
        // cooperative thread while the rest of the suite runs.
        let (result, ended) = await task.value
        #expect(result.failure?.isCancelled == true)
        #expect(ended.timeIntervalSince(began) < 2)
    }

    /// Invalidating the client ends the request; the task then goes on on Swift's global executor
    /// (the loop is gone) and is never stranded.
    @Test func aTaskOnTheLoopOutlivesItsClient() async throws {
        let client = try Self.client()
        let executor = try #require(client.taskExecutor)
        let loop = try await Self.loopThread(of: client)
        let task = Task {
            await withTaskExecutorPreference(executor) { () async -> (Bool, Bool) in
                let result = await Self.result(client, Request<Data>("stall", query: ["seconds": 5]))
                // Suspensions after the invalidation: once the loop has gone (soon, but later on
                // a loaded machine), the task resumes elsewhere.
                for _ in 0..<300 {
                    try? await Task.sleep(milliseconds: 10)
                    if !Self.onLoop(loop) { break }
                }
                return (result.failure?.isCancelled == true, !Self.onLoop(loop))
            }
        }
        // Invalidated once the request is in flight (before it, the request would fail as
        // `.clientInvalidated`, not cancelled): on a loaded machine the task can take longer to start.
        #expect(await eventually { !client.runningRequests.isEmpty })
        client.invalidate()
        let (cancelled, elsewhere) = await task.value
        #expect(cancelled)
        #expect(elsewhere)
    }

    /// Sixteen tasks on the loop, each sending requests (some stalled) until it is cancelled at
    /// a random moment: every one of them ends.
    @Test func randomlyCancelledTasksOnTheLoopAllEnd() async throws {
        let client = try Self.client()
        defer { client.invalidate() }
        let executor = try #require(client.taskExecutor)
        let ended = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<16 {
                let task = Task(executorPreference: executor) {
                    for index in 0..<40 {
                        let request = index % 5 == 0 ? Request<JSON>("stall", query: ["seconds": 0.2]) : Request<JSON>("json")
                        _ = await Self.result(client, request)
                        if Task.isCancelled { break }
                    }
                    ended.increment()
                }
                group.addTask {
                    try? await Task.sleep(milliseconds: UInt64.random(in: 10...400))
                    task.cancel()
                    await task.value
                }
            }
        }
        #expect(ended.count == 16)
    }

    /// Several tasks on the loop at once, and callers off it, share the transport.
    @Test func tasksOnAndOffTheLoopShareTheTransport() async throws {
        let client = try Self.client()
        defer { client.invalidate() }
        let executor = try #require(client.taskExecutor)
        let failures = await withTaskGroup(of: Int.self) { group in
            for worker in 0..<8 {
                group.addTask(executorPreference: worker.isMultiple(of: 2) ? executor : nil) {
                    var failed = 0
                    for index in 0..<25 {
                        let result = await Self.result(client, Request<JSON>("json", query: ["w": worker, "n": index]))
                        if (try? result.get())?.json["items"]?.array?.count != index { failed += 1 }
                    }
                    return failed
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
    }
}
#endif
