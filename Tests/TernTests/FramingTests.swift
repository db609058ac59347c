import Foundation
import Testing

@testable import Tern

/// Message framing as RFC 9112 §6.3 says, the same over every transport: `Content-Length`
/// values that conflict, or one that is not a non-negative number, are an unrecoverable error;
/// beside `Transfer-Encoding: chunked`, the chunked framing wins; a list of equal values is one.
@Suite struct FramingTests {
    static func send(_ situation: String, over transport: TransportKind) async throws -> Result<Response<Data>, TernError> {
        let client = transport.client(try TestServers.fixture())
        return await client.completionResult(Request<Data>("framing", query: ["case": situation])).0
    }

    @Test(arguments: TransportKind.all, ["conflict", "negative", "text"])
    func anInvalidContentLengthIsAFramingError(over transport: TransportKind, _ situation: String) async throws {
        let result = try await Self.send(situation, over: transport)
        guard case .failure(.transport(let error)) = result else {
            Issue.record("\(situation): expected a transport error, got \(result)")
            return
        }
        #expect(error.code == .badServerResponse, "\(error.localizedDescription)")
        #expect(error.localizedDescription.contains("Content-Length"), "\(error.localizedDescription)")
    }

    @Test(arguments: TransportKind.all, ["same", "list", "chunked"])
    func equalValuesOrChunkedFramingAreRead(over transport: TransportKind, _ situation: String) async throws {
        let response = try await Self.send(situation, over: transport).get()
        #expect(response.data == Data("0123456789".utf8))
    }
}
