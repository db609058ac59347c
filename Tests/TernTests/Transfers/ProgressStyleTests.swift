import Foundation
import Testing
@testable import Tern

/// Transfer progress in the other two styles: an async sequence (`Client.transfer`) and a
/// delegate method (`TransferDelegate`); the closure style is `ProgressTests`.
@Suite struct ProgressStyleTests {
    @Test func anAsyncTransferReportsProgressThenItsResponse() async throws {
        let folder = try Transfers.scratch("transfer")
        defer { Transfers.clean(folder) }
        let size = 3_000_000
        let destination = folder.appendingPathComponent("file.bin")
        let transfer = try Transfers.client().transfer(
            Request.download("download", to: destination).querying(["key": Fixture.uniqueKey("transfer"), "size": size]))
        var steps: [TransferProgress] = []
        for await step in transfer.progress { steps.append(step) }
        let response = try await transfer.response
        #expect(response.value.size == Int64(size))
        #expect(!steps.isEmpty && zip(steps, steps.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
        #expect(steps.last == TransferProgress(direction: .download, completedBytes: Int64(size), expectedBytes: Int64(size)))
        #expect(try await transfer.response.value == response.value)  // awaiting again gives the same
    }

    @Test func anAsyncUploadReportsUploadProgressAndCanBeCancelled() async throws {
        let body = RequestBody.data(TestPattern.bytes(2_000_000))
        let transfer = try Transfers.client().transfer(Request<JSON>("upload-sizes", method: .post, body: body))
        var uploaded: Int64 = 0
        for await step in transfer.progress where step.direction == .upload { uploaded = step.completedBytes }
        #expect(uploaded == 2_000_000)
        #expect(try await transfer.response.json["size"]?.int == 2_000_000)

        // A long stall: under load, URLSession on Linux can take seconds to end a cancelled task.
        let stalled = try Transfers.client().transfer(Request<JSON>("stall", query: ["seconds": 60]))
        let waiting = Task { try await stalled.response }
        try await Task.sleep(milliseconds: 100)
        stalled.cancel()
        await #expect(throws: TernError.cancelled(.explicit)) { try await waiting.value }
        for await _ in stalled.progress {}  // the sequence ends with the request
    }

    @Test func aTransferDelegateFollowsProgressWithTheHandle() async throws {
        let delegate = StreamRecorder()
        let handle = try Transfers.client().send(
            Request<Data>("slow-pattern", query: ["n": 200_000, "chunk": 20_000, "interval": 0.01]),
            delegate: delegate)
        try await delegate.waitForResult()
        #expect(delegate.results == ["success"])
        let steps = delegate.progress.filter { $0.direction == .download }
        #expect(steps.last == TransferProgress(direction: .download, completedBytes: 200_000, expectedBytes: 200_000))
        #expect(handle.isFinished)
    }
}
