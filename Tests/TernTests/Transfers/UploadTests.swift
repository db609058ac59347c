import Foundation
import Testing
@testable import Tern

/// Uploads from files and multipart forms: httpbin as the reference parser, the fixture's
/// `/upload-sizes` for what arrived on the wire (length, chunking, parts, checksums).
@Suite struct UploadTests {
    /// Writes `count` pattern bytes to a new file in `folder`.
    static func patternFile(_ folder: URL, _ name: String, count: Int) throws -> URL {
        let url = folder.appendingPathComponent(name)
        try TestPattern.bytes(count).write(to: url)
        return url
    }

    /// The SHA-256 of `data` by the platform's implementation (libcrypto on Linux): Tern's own
    /// takes seconds for megabytes in a debug build, on one of the few threads every test shares.
    static func sha256(_ data: Data) -> String {
        var digest = Checksum()
        digest.update(data)
        return digest.hexDigest()
    }

    @Test func aFileIsStreamedWithItsLengthAndUploadProgressReachesTheTotal() async throws {
        let folder = try Transfers.scratch("upload-file")
        defer { Transfers.clean(folder) }
        let file = try Self.patternFile(folder, "data.bin", count: 3_000_000)
        let log = ProgressLog()
        let request = Request<JSON>("upload-sizes", method: .put, body: .file(file)).onProgress { log.record(.progress($0)) }
        let json = try await Transfers.client().send(request).json
        #expect(json["size"]?.int == 3_000_000 && json["contentLength"]?.int == 3_000_000)
        #expect(json["chunked"]?.bool == false)
        #expect(json["sha256"]?.string == Self.sha256(TestPattern.bytes(3_000_000)))
        #expect(json["contentType"]?.string == "application/octet-stream")
        #expect(log.progress(.upload).last == TransferProgress(direction: .upload, completedBytes: 3_000_000, expectedBytes: 3_000_000))
        #expect(FileManager.default.fileExists(atPath: file.path))  // the caller's file stays
    }

    @Test func aMissingOrUnreadableFileFailsWithATypedError() async throws {
        let folder = try Transfers.scratch("upload-missing")
        defer { Transfers.clean(folder) }
        let missing = folder.appendingPathComponent("nope.bin")
        let result = await (try Transfers.client()).completionResult(Request<JSON>("upload-sizes", method: .post, body: .file(missing)))
        #expect(result.0.failure == .invalidRequest(.unreadableFile(missing, reason: "no such file")))
        let folderBody = await (try Transfers.client()).completionResult(Request<JSON>("upload-sizes", method: .post, body: .file(folder)))
        #expect(folderBody.0.failure == .invalidRequest(.unreadableFile(folder, reason: "not a regular file")))
        var form = MultipartFormData()
        form.append(fileAt: missing, name: "doc")
        let multipart = await (try Transfers.client()).completionResult(
            Request<JSON>("upload-sizes", method: .post, body: .multipart(form)))
        #expect(multipart.0.failure == .invalidRequest(.unreadableFile(missing, reason: "no such file")))
    }

    @Test func httpbinParsesAMultipartFormWithChineseNamesAndTwoFiles() async throws {
        let folder = try Transfers.scratch("upload-httpbin")
        defer { Transfers.clean(folder) }
        let notes = folder.appendingPathComponent("笔记.txt")
        try Data("晴转多云\n".utf8).write(to: notes)
        let body = RequestBody.multipart { form in
            form.append("北京", name: "城市")
            form.append("two words & more=", name: "comment")
            form.append(fileAt: notes, name: "notes")
            form.append(Data([0, 1, 2, 255]), name: "blob", fileName: "raw.bin")
        }
        let client = Client(baseURL: try TestServers.httpbin()) { $0.callbackQueue = .immediate }
        let json = try await client.send(Request<JSON>("post", method: .post, body: body)).json
        #expect(json["form"]?["城市"]?.string == "北京")
        #expect(json["form"]?["comment"]?.string == "two words & more=")
        #expect(json["files"]?["notes"]?.string == "晴转多云\n")
        #expect(json["files"]?["blob"]?.string?.hasPrefix("data:application/octet-stream;base64,AAEC/w==") == true)
        #expect(json["headers"]?["Content-Type"]?.string?.hasPrefix("multipart/form-data; boundary=Tern-") == true)
    }

    @Test func partsAreNamedTypedAndEscapedAsBrowsersSendThem() async throws {
        var form = MultipartFormData()
        form.append("v", name: "quote\"d\r\nname")
        form.append(Data("%PDF".utf8), name: "report", fileName: "报告 \"final\".pdf")
        form.append(Data("x".utf8), name: "photo", fileName: "IMG.JPEG")
        form.append(Data("y".utf8), name: "other", fileName: "data.unknownext", mimeType: "application/x-custom")
        let json = try await Transfers.client().send(Request<JSON>("upload-sizes", method: .post, body: .multipart(form))).json
        #expect(json["fields"]?["quote%22d%0D%0Aname"]?.string == "v")
        let report = try #require(json["files"]?["report"])
        #expect(report["filename"]?.string == "报告 %22final%22.pdf")
        #expect(report["filenameStar"]?.string == "报告 \"final\".pdf")
        #expect(report["contentType"]?.string == "application/pdf")
        #expect(json["files"]?["photo"]?["contentType"]?.string == "image/jpeg")
        #expect(json["files"]?["photo"]?["filenameStar"] == .null)  // ASCII names need no filename*
        #expect(json["files"]?["other"]?["contentType"]?.string == "application/x-custom")
        #expect(json["contentLength"]?.int == json["size"]?.int && json["chunked"]?.bool == false)
    }

    /// A MIME type with CR, LF or NUL would add its own header to the part: refused before
    /// anything is sent, naming the part, whether the part is in memory or a file.
    @Test(arguments: TransportKind.all, ["text/plain\r\nX-Injected: yes", "text/plain\nX: y", "text/plain\rX: y", "text/plain\0"])
    func aMIMETypeThatWouldEndItsHeaderLineIsRefused(over transport: TransportKind, mimeType: String) async throws {
        let folder = try Transfers.scratch("upload-mime")
        defer { Transfers.clean(folder) }
        let file = try UploadTests.patternFile(folder, "a.txt", count: 10)
        for inMemory in [true, false] {
            var form = MultipartFormData()
            form.append("v", name: "field")
            if inMemory {
                form.append(Data("x".utf8), name: "avatar", fileName: "a.txt", mimeType: mimeType)
            } else {
                form.append(fileAt: file, name: "avatar", mimeType: mimeType)
            }
            let client = try Transfers.client { transport.configure(&$0) }
            let (result, _) = await client.completionResult(Request<JSON>("upload-sizes", method: .post, body: .multipart(form)))
            guard case .failure(.invalidRequest(.invalidPart(let name, let reason))) = result else {
                Issue.record("expected .invalidPart, got \(result)")
                continue
            }
            #expect(name == "avatar" && reason.contains("MIME type"))
        }
    }

    @Test func theBoundaryNeverOccursInAPart() {
        var form = MultipartFormData()
        let first = form.boundary
        form.append("before \(first) after", name: "trap")
        #expect(form.boundary != first && form.boundary.hasPrefix("Tern-") && form.boundary.count == 37)
        #expect(MultipartFormData().boundary != MultipartFormData().boundary)
    }

    @Test func aFileBodyIsSentAgainAfterA307Redirect() async throws {
        let folder = try Transfers.scratch("upload-307")
        defer { Transfers.clean(folder) }
        let file = try Self.patternFile(folder, "data.bin", count: 200_000)
        let target = try TestServers.fixture() + "/upload-sizes"
        let request = Request<JSON>("redirect", method: .post, query: ["status": 307, "to": target], body: .file(file))
        let response = try await Transfers.client().send(request)
        #expect(response.redirects.count == 1)
        #expect(response.json["size"]?.int == 200_000 && response.json["sha256"]?.string == Self.sha256(TestPattern.bytes(200_000)))
    }
}

/// Multipart forms too large for memory: streamed from a temporary file that never outlives its
/// request. Serialized: the checks count temporary files and the process's memory.
@Suite(.serialized) struct LargeUploadTests {
    /// The multipart temporary files in the temporary directory.
    static func temporaryFiles() -> Set<String> {
        Set(
            ((try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)) ?? [])
                .filter { $0.hasPrefix("tern-multipart-") })
    }

    /// The size of the large file.
    static let size = 100 * 1024 * 1024

    /// A scratch folder `name` holding `big.bin` (`size` bytes of the pattern, written in 1 MB
    /// pieces: the test itself must not hold 100 MB) and `small.txt` (1,000 bytes).
    static func files(_ name: String) throws -> (folder: URL, big: URL, small: URL) {
        let folder = try Transfers.scratch(name)
        let big = folder.appendingPathComponent("big.bin")
        #expect(FileManager.default.createFile(atPath: big.path, contents: nil))
        let handle = try FileHandle(forWritingTo: big)
        let piece = TestPattern.bytes(1 << 20)
        for _ in 0..<(size >> 20) { try handle.writeAll(piece) }
        try handle.close()
        return (folder, big, try UploadTests.patternFile(folder, "small.txt", count: 1000))
    }

    #if os(macOS) || os(Linux)  // a child process of its own
    @Test func aHundredMegabyteFileGoesFromDiskWithFlatMemoryAndTheRightSizes() async throws {
        let (folder, big, small) = try Self.files("upload-large")
        defer { Transfers.clean(folder) }
        let size = Self.size
        let url = try TestServers.fixture() + "/upload-sizes"
        // In a process of its own (`tern-transfer`), so other tests' memory does not count.
        let baseline = Transfers.peak(try await Transfers.runTool(["upload", url, small.path, "名称=雷达"]))
        let before = Self.temporaryFiles()
        let lines = try await Transfers.runTool(["upload", url, big.path, "名称=雷达"])
        let growth = Transfers.peak(lines) - baseline
        print(
            "100 MB multipart upload from disk: peak RSS \(Transfers.peak(lines) / 1_048_576) MB "
                + "(+\(growth / 1_048_576) MB over a 1 KB upload)")
        let body = try #require(lines.last { $0.first == "response" }?.dropFirst().joined(separator: " "))
        let json = try JSON(data: Data(body.utf8))
        #expect(json["files"]?["file"]?["size"]?.int == size)
        #expect(json["files"]?["file"]?["filename"]?.string == "big.bin")
        #expect(json["fields"]?["名称"]?.string == "雷达")
        #expect(json["contentLength"]?.int == json["size"]?.int && json["chunked"]?.bool == false)
        let progress = lines.filter { $0.first == "progress" && $0[1] == "up" }.compactMap { Int64($0[2]) }
        #expect(progress.last.map { $0 > Int64(size) } == true && progress == progress.sorted())
        if !LimitTests.isUnderThreadSanitizer {
            #expect(baseline > 0 && growth < Int64(size / 4), "peak RSS grew by \(growth / 1_048_576) MB")
        }
        #expect(Self.temporaryFiles() == before)  // the temporary file went with the request
    }
    #endif

    /// The same 100 MB form to httpbin, the independent parser: it echoes the file back as a
    /// base64 data URL (about 133 MB), which the test streams (`onChunk`) and measures instead of
    /// holding, keeping the rest of the JSON.
    @Test func httpbinParsesAHundredMegabyteFormStreamedFromDisk() async throws {
        let (folder, big, small) = try Self.files("upload-httpbin-large")
        defer { Transfers.clean(folder) }
        let size = Self.size
        var request = Request<Data>(
            "post", method: .post,
            body: .multipart { form in
                form.append("雷达图", name: "名称")
                form.append(fileAt: small, name: "small", mimeType: "text/plain")
                form.append(fileAt: big, name: "big")
            })
        request.timeout = 300
        request.maximumResponseSize = Int.max  // the 133 MB echo streams past the 100 MB default limit
        let scanner = DataURLScanner(marker: #""big": "data:application/octet-stream;base64,"#)
        let client = Client(baseURL: try TestServers.httpbin()) { $0.callbackQueue = .immediate }
        let result: Result<Response<Data>, TernError> = await withCheckedContinuation { continuation in
            client.stream(request, onChunk: { scanner.feed($0) }, completion: { continuation.resume(returning: $0) })
        }
        #expect(result.failure == nil)
        let (kept, base64Length) = scanner.result
        #expect(base64Length == (size + 2) / 3 * 4)  // httpbin saw all 100 MB of the file part
        let json = try JSON(data: kept)
        #expect(json["form"]?["名称"]?.string == "雷达图")
        #expect(json["files"]?["small"]?.string?.utf8.count == 1000 || json["files"]?["small"]?.string?.hasPrefix("data:") == true)
        #expect(json["headers"]?["Content-Length"]?.string.flatMap(Int.init).map { $0 > size } == true)
        #expect(json["headers"]?["Transfer-Encoding"] == nil)
    }

    @Test func theTemporaryFileGoesOnFailureAndOnCancel() async throws {
        var form = MultipartFormData()
        form.memoryThreshold = 1000
        form.append(TestPattern.bytes(50_000), name: "data", fileName: "data.bin")
        let before = Self.temporaryFiles()
        // A failure: the server answers 503.
        let key = Fixture.uniqueKey("upload-503")
        let failed = await (try Transfers.client()).completionResult(
            Request<JSON>("flaky", method: .post, query: ["key": key, "fail": 1], body: .multipart(form)))
        #expect(failed.0.failure?.statusCode == 503)
        #expect(Self.temporaryFiles() == before)
        // A cancel while the server stalls.
        let ended = Counter()
        let handle = try Transfers.client().send(
            Request<JSON>(
                "flaky", method: .post, query: ["key": Fixture.uniqueKey("upload-stall"), "fail": 1, "mode": "stall", "seconds": 5],
                body: .multipart(form))
        ) { _ in ended.increment() }
        try await Task.sleep(milliseconds: 300)
        handle.cancel()
        try await Task.sleep(milliseconds: 200)
        #expect(ended.count == 1)
        #expect(Self.temporaryFiles() == before)
    }
}

/// Keeps a streamed JSON body except one huge string value after `marker`, whose length it
/// counts: what is kept is the JSON with that value cut to the marker's prefix.
final class DataURLScanner: Sendable {
    private struct State {
        var kept = Data()
        var inValue = false
        var seenMarker = false
        var length = 0
    }
    private let state = Locked(State())
    private let marker: Data

    init(marker: String) { self.marker = Data(marker.utf8) }

    func feed(_ chunk: Data) {
        state.withLock { state in
            var value = Data()
            if state.inValue {
                value = chunk
            } else {
                state.kept.append(chunk)
                guard !state.seenMarker, let found = state.kept.range(of: marker) else { return }
                state.seenMarker = true
                state.inValue = true
                value = Data(state.kept[found.upperBound...])
                state.kept.removeSubrange(found.upperBound...)
            }
            // The value ends at the next quote (base64 has none): memchr, fast in debug builds too.
            let end: Int? = value.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress else { return nil }
                return memchr(base, 0x22, bytes.count).map { UnsafeRawPointer($0) - base }
            }
            guard let end else {
                state.length += value.count
                return
            }
            state.length += end
            state.inValue = false
            state.kept.append(value[(value.startIndex + end)...])
        }
    }

    /// The JSON kept, and the length of the value left out.
    var result: (Data, Int) { state.withLock { ($0.kept, $0.length) } }
}
