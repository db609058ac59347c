import Foundation
import Tern

// The samples of the articles on uploads and on the libcurl transport's network settings, compiled.

func compressedUploads(api: Client, logLines: Data) async throws -> JSON {
    var upload = Request<JSON>("logs", method: .post, body: .data(logLines))
    upload.compression = .gzip  // Content-Encoding: gzip
    let analytics = APIGroup("analytics", baseURL: "https://collect.example.com") {
        $0.requestCompression = .deflate  // every request of the group
    }
    var event = Request<JSON>("events", method: .post, body: .json(["name": "opened"]))
    event.group = analytics
    _ = try await api.send(event)
    return try await api.send(upload).value
}

/// Makes one page of a report.
typealias Page = @Sendable (Int) async throws -> Data

func streamedUploads(api: Client, export: AsyncStream<Data>, page: @escaping Page) async throws {
    // a sequence, read once: chunked, since its length is not known
    let imports = Request<JSON>("imports", method: .post, body: .stream(export))
    _ = try await api.send(imports)
    // a producer, called again for each attempt: retries and 307/308 redirects resend it
    let report = RequestBody.stream(contentType: "text/csv") { writer in
        for number in 1...40 { try await writer.write(try await page(number)) }
    }
    _ = try await api.send(Request<JSON>("reports", method: .put, body: report))
}

func networkSettings() -> Client {
    Client(baseURL: "https://api.example.com") {
        // the proxy resolves names (socks5h)
        $0.transportSettings.proxy = .socks5(host: "127.0.0.1", port: 1080)
        $0.transportSettings.hostOverrides.resolve("api.example.com", to: "10.0.0.7")
        $0.transportSettings.hostOverrides.connect("search.example.com", to: "canary.internal")
    }
}
