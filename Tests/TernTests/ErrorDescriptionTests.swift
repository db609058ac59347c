import Foundation
import Testing

@testable import Tern

/// `localizedDescription`, which alerts and logs show, is Tern's one-line description, with the
/// status's reason phrase and the transport error's name; `recoverySuggestion` where it helps.
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
        // The method and the URL that answered, its secret query value redacted.
        #expect(
            error.localizedDescription == "HTTP status 404 Not Found from GET \(base)/status/404?password=<redacted>",
            "\(error.localizedDescription)")
        let busy = try await Self.failure(Request<Data>("status/503"), over: transport, base: base)
        #expect((busy as? LocalizedError)?.recoverySuggestion == "The server is busy; try again later.")
    }

    @Test(arguments: TransportKind.all)
    func aTransportErrorNamesItsCode(over transport: TransportKind) async throws {
        // Port 9 (discard) has no listener on loopback here: the connection is refused.
        let error = try await Self.failure(Request<Data>("nothing"), over: transport, base: "http://127.0.0.1:9")
        #expect(error.localizedDescription.hasPrefix("Transport error -1004 (cannotConnectToHost): "), "\(error.localizedDescription)")
        #expect((error as? LocalizedError)?.recoverySuggestion == "Check the server's address, or try again later.")
    }

    @Test func everyLocalizedDescriptionIsTheRedactedDescription() {
        let errors: [TernError] = [
            .invalidRequest(.emptyURL), .timedOut(after: 2), .cancelled(.explicit), .clientInvalidated,
            .responseTooLarge(limit: 10), .unacceptableStatus(code: 299, body: Data(), headers: [:]),
            .failedAfterRetries(attempts: 3, last: .unacceptableStatus(code: 500, body: Data("oops".utf8), headers: [:])),
        ]
        for error in errors {
            #expect((error as any Error).localizedDescription == error.description)
        }
        #expect(TernError.unacceptableStatus(code: 299, body: Data(), headers: [:]).description == "HTTP status 299")
        let retried = TernError.failedAfterRetries(attempts: 3, last: .unacceptableStatus(code: 500, body: Data(), headers: [:]))
        #expect(retried.recoverySuggestion == "The server had a problem; try again later.")
        #expect(TernError.name(of: .backgroundSessionWasDisconnected) == "code -997")  // a code it does not name
    }
}
