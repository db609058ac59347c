import Foundation
import Testing

@testable import Tern

/// Ranges as servers really answer them: an entity tag written without quotes, and a 206 that
/// nobody asked for.
@Suite struct RangeAnswerTests {
    /// httpbin's `/range/N` tags its body `range<N>`, without the quotes RFC 9110 asks for. The tag
    /// is opaque: Tern sends it back in `If-Range` and continues the file with the 206 it brings,
    /// in one request, instead of throwing the 206 away and starting over.
    @Test func aDownloadWhoseETagHasNoQuotesResumes() async throws {
        let folder = try Transfers.scratch("download-unquoted")
        defer { Transfers.clean(folder) }
        let client = Client(baseURL: try TestServers.httpbin()) { $0.callbackQueue = .immediate }
        let whole = try await client.send(Request<Data>("range/1000"))
        #expect(whole.header("ETag") == "range1000")
        // What a broken-off download leaves: the first 400 bytes and the record of the response
        // that started them.
        let record = try #require(ResumeRecord(whole.httpResponse))
        let destination = folder.appendingPathComponent("file.bin")
        try whole.data.prefix(400).write(to: URL(fileURLWithPath: destination.path + ".terndownload"))
        record.write(to: URL(fileURLWithPath: destination.path + ".terndownload.resume"))

        let resumed = try await client.send(Request.download("range/1000", to: destination, options: DownloadOptions(isResumable: true)))
        #expect(resumed.attempt == 1)
        #expect(resumed.statusCode == 206)
        #expect(resumed.value.resumedFrom == 400 && resumed.value.size == 1000)
        #expect(try Data(contentsOf: destination) == whole.data)
        #expect(Transfers.contents(folder) == ["file.bin"])
    }

    /// A 206 to a request that asked for no range holds a part of the body from somewhere else:
    /// it is not taken for the whole body. The download fails with a typed error and leaves no
    /// file behind.
    @Test(arguments: [false, true])
    func a206ThatNobodyAskedForIsNotTakenForTheBody(resumable: Bool) async throws {
        let folder = try Transfers.scratch("download-unasked")
        defer { Transfers.clean(folder) }
        let key = Fixture.uniqueKey("dl-unasked")
        try await Transfers.setState(key, ["unasked": 500])
        let destination = folder.appendingPathComponent("file.bin")
        let request = Request.download("download", to: destination, options: DownloadOptions(isResumable: resumable))
            .querying(["key": key, "size": 1000])
        let (result, _) = await (try Transfers.client()).completionResult(request)
        let error = try #require(result.failure)
        #expect(error.underlyingError != nil, "\(error)")
        #expect(String(describing: error).contains("byte 500"), "\(error)")
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        #expect(try await Transfers.stats(key).starts == [500])
        #expect(Transfers.contents(folder) == [])
    }
}
