import Foundation
import Testing

@testable import Tern

/// `localizedDescription`, which alerts show, is a short sentence for users, never the server's
/// text; `description` and `failureReason`, for logs, are the one-line technical description,
/// with the status's reason phrase and the transport error's name; `recoverySuggestion` where it
/// helps.
@Suite struct ErrorDescriptionTests {
    static func failure(_ request: Request<Data>, over transport: TransportKind, base: String) async throws -> any Error {
        let client = transport.client(base)
        do {
            _ = try await client.send(request)
        } catch {
            return error
        }
        throw TernError.unsupportedConfiguration("expected \(request.url) to fail")
    }

    @Test(arguments: TransportKind.all)
    func aStatusErrorNamesItsReasonPhrase(over transport: TransportKind) async throws {
        let base = try TestServers.httpbin()
        let error = try await Self.failure(Request<Data>("status/404", query: ["password": "hunter2"]), over: transport, base: base)
        #expect(error.localizedDescription == "The requested item could not be found.")
        // For logs: the method and the URL that answered, its secret query value redacted.
        let details = "HTTP status 404 Not Found from GET \(base)/status/404?password=<redacted>"
        #expect(String(describing: error) == details)
        #expect((error as? LocalizedError)?.failureReason == details)
        let busy = try await Self.failure(Request<Data>("status/503"), over: transport, base: base)
        #expect((busy as? LocalizedError)?.recoverySuggestion == "The server is busy; try again later.")
    }

    @Test(arguments: TransportKind.all)
    func aTransportErrorNamesItsCode(over transport: TransportKind) async throws {
        // Port 9 (discard) has no listener on loopback here: the connection is refused.
        let error = try await Self.failure(Request<Data>("nothing"), over: transport, base: "http://127.0.0.1:9")
        #expect(error.localizedDescription == "The server could not be reached.")
        #expect(String(describing: error).hasPrefix("Transport error -1004 (cannotConnectToHost): "), "\(error)")
        #expect((error as? LocalizedError)?.recoverySuggestion == "Check the server's address, or try again later.")
    }

    /// A server's HTML error page, a decoder's debug text: in the logs' description, never in
    /// what an alert shows.
    @Test(arguments: TransportKind.all)
    func anAlertNeverShowsTheServersText(over transport: TransportKind) async throws {
        let base = try TestServers.httpbin()
        let client = transport.client(base)
        let html = try #require(await client.completionResult(Request<JSON>("html")).0.failure)
        #expect(html.localizedDescription == "The server's response could not be read.")
        #expect(String(describing: html).contains("<!DOCTYPE html>"), "\(html)")
        let decoding = try #require(await client.completionResult(Request<[Int]>("json")).0.failure)
        #expect(decoding.localizedDescription == "The server's response could not be read.")
        #expect(String(describing: decoding).hasPrefix("Decoding failed: "), "\(decoding)")
    }

    @Test func everyLocalizedDescriptionIsAShortSentenceAndTheDetailsAreForLogs() {
        struct Rule: LocalizedError { var errorDescription: String? { "Please sign in again." } }
        let body = Data("<!DOCTYPE html><html><body>Internal error at /srv/app.py line 12</body></html>".utf8)
        let errors: [TernError] = [
            .invalidRequest(.emptyURL), .transport(URLError(.notConnectedToInternet)), .timedOut(after: 2),
            .deadlineExceeded(after: 5),
            .unacceptableStatus(
                code: 500, body: body, headers: [:],
                request: .init(method: "GET", url: URL(string: "https://api.example.com/v1/me?token=abc"))),
            .unacceptableContentType("text/html", body: body),
            .decoding(description: "keyNotFound(CodingKeys(stringValue: \"id\"))", body: body),
            .cancelled(.superseded), .cancelled(.duplicate), .clientInvalidated,
            .cacheMiss(url: URL(string: "https://api.example.com/v1/me")),
            .redirectFailed(.tooMany(limit: 10, url: URL(string: "https://api.example.com/loop")!)),
            .rejected(by: "AuthRule", error: Rule()), .responseTooLarge(limit: 10), .business(code: 7, message: "", body: body),
            .failedAfterRetries(attempts: 3, last: .unacceptableStatus(code: 503, body: body, headers: [:])),
            .pinningFailed(host: "api.example.com"), .unsupportedConfiguration("timeout must be more than 0 seconds"),
        ]
        for error in errors {
            let shown = (error as any Error).localizedDescription
            #expect(shown.count <= 60 && !shown.contains("\n") && shown.hasSuffix("."), "\(shown)")
            for secret in ["<", "api.example.com", "CodingKeys", "Internal error", "token"] {
                #expect(!shown.contains(secret), "\(shown)")
            }
            #expect(error.failureReason == error.description && error.debugDescription == error.description)
        }
        #expect(TernError.rejected(by: "AuthRule", error: Rule()).localizedDescription == "Please sign in again.")
        #expect(TernError.business(code: 7, message: "余额不足", body: body).localizedDescription == "余额不足")
        // Why a request was cancelled is in its description.
        #expect(TernError.cancelled(.superseded).description.contains("a newer identical request replaced it"))
        #expect(TernError.cancelled(.ownerReleased).description.contains("its owner was deallocated"))
        #expect(TernError.cancelled(.explicit).description.contains("cancelled by the app"))
        // …and in what an alert shows, where the app did not cancel it itself.
        #expect(TernError.cancelled(.superseded).localizedDescription == "A newer request for the same content replaced this one.")
        #expect(TernError.cancelled(.duplicate).localizedDescription == "The same request is already in progress.")
        #expect(TernError.cancelled(.explicit).localizedDescription == "The request was cancelled.")
        #expect(TernError.unacceptableStatus(code: 299, body: Data(), headers: [:]).description == "HTTP status 299")
        let retried = TernError.failedAfterRetries(attempts: 3, last: .unacceptableStatus(code: 500, body: Data(), headers: [:]))
        #expect(retried.recoverySuggestion == "The server had a problem; try again later.")
        #expect(TernError.name(of: .backgroundSessionWasDisconnected) == "code -997")  // a code it does not name
    }
}
