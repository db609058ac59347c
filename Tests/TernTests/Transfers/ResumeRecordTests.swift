import Foundation
import Testing

@testable import Tern

/// When a 206 may continue a partial file: the same version (strong comparison), from the same
/// byte, of the same total length.
@Suite struct ResumeRecordTests {
    static let url = URL(string: "http://127.0.0.1/file")!

    static func partial(_ headers: [String: String]) -> HTTPURLResponse {
        HTTPURLResponse(url: url, statusCode: 206, httpVersion: "HTTP/1.1", headerFields: headers)!
    }

    let record = ResumeRecord(url: url.absoluteString, validator: "\"v1\"", isEntityTag: true, totalLength: 1000)

    @Test func theSameVersionFromTheSameByteContinues() {
        #expect(record.mismatch(with: Self.partial(["Content-Range": "bytes 400-999/1000", "ETag": "\"v1\""]), at: 400) == nil)
        #expect(record.mismatch(with: Self.partial(["Content-Range": "bytes 400-999/*", "ETag": "\"v1\""]), at: 400) == nil)
    }

    @Test(arguments: [
        (["Content-Range": "bytes 400-999/1000", "ETag": "\"v2\""], "version"),
        (["Content-Range": "bytes 400-999/1000", "ETag": "W/\"v1\""], "version"),
        (["Content-Range": "bytes 400-999/1000"], "no validator"),
        (["Content-Range": "bytes 401-999/1000", "ETag": "\"v1\""], "resumed at byte 401"),
        (["Content-Range": "bytes 400-1199/1200", "ETag": "\"v1\""], "now 1200 bytes"),
        (["ETag": "\"v1\""], "without a usable Content-Range"),
        (["Content-Range": "bytes -5/1000", "ETag": "\"v1\""], "without a usable Content-Range"),
    ])
    func anythingElseIsAMismatch(_ headers: [String: String], _ reason: String) {
        let mismatch = record.mismatch(with: Self.partial(headers), at: 400)
        #expect(mismatch?.contains(reason) == true, "\(headers): \(mismatch ?? "nil")")
    }

    @Test func aDateValidatorIsComparedWithLastModified() {
        let date = "Tue, 14 Nov 2023 22:13:20 GMT"
        let byDate = ResumeRecord(url: Self.url.absoluteString, validator: date, isEntityTag: false)
        #expect(byDate.mismatch(with: Self.partial(["Content-Range": "bytes 5-9/10", "Last-Modified": date]), at: 5) == nil)
        #expect(
            byDate.mismatch(with: Self.partial(["Content-Range": "bytes 5-9/10", "Last-Modified": "Wed, 15 Nov 2023 22:13:20 GMT"]), at: 5)
                != nil)
    }

    /// An entity tag is opaque: one written without quotes (httpbin's `range100000`) is sent back
    /// and compared as it is, so the 206 it brings continues the file.
    @Test func anUnquotedEntityTagIsComparedWithTheETag() throws {
        let whole = HTTPURLResponse(
            url: Self.url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["ETag": "range100000", "Content-Length": "1000"])!
        let unquoted = try #require(ResumeRecord(whole))
        #expect(unquoted.validator == "range100000")
        #expect(unquoted.mismatch(with: Self.partial(["Content-Range": "bytes 400-999/1000", "ETag": "range100000"]), at: 400) == nil)
        #expect(unquoted.mismatch(with: Self.partial(["Content-Range": "bytes 400-999/1000", "ETag": "\"range100000\""]), at: 400) != nil)
        #expect(unquoted.mismatch(with: Self.partial(["Content-Range": "bytes 400-999/1000"]), at: 400) != nil)
    }

    /// A record written before the kind of validator was kept reads as it did then: a quoted
    /// validator is a tag, anything else a date.
    @Test func aRecordWithoutTheKindOfItsValidatorStillResumes() throws {
        let old = Data(#"{"url": "http://127.0.0.1/file", "validator": "\"v1\"", "totalLength": 1000}"#.utf8)
        let record = try JSONDecoder().decode(ResumeRecord.self, from: old)
        #expect(record.mismatch(with: Self.partial(["Content-Range": "bytes 400-999/1000", "ETag": "\"v1\""]), at: 400) == nil)
    }

    @Test func theRecordKeepsTheValidatorAndTheLengthOfTheBytesOnDisk() {
        let whole = HTTPURLResponse(
            url: Self.url, statusCode: 200, httpVersion: "HTTP/1.1",
            headerFields: ["ETag": "\"v1\"", "Content-Length": "1000"])!
        #expect(ResumeRecord(whole) == record)
        let gzipped = HTTPURLResponse(
            url: Self.url, statusCode: 200, httpVersion: "HTTP/1.1",
            headerFields: ["ETag": "\"v1\"", "Content-Length": "300", "Content-Encoding": "gzip"])!
        #expect(ResumeRecord(gzipped)?.totalLength == nil)  // the file holds the decoded bytes
        let weak = HTTPURLResponse(url: Self.url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["ETag": "W/\"v1\""])!
        #expect(ResumeRecord(weak) == nil)
    }
}
