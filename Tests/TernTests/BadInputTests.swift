import Foundation
import Testing
@testable import Tern

/// Requests that cannot be built fail with a typed error through the normal callback, in every style.
@Suite struct BadInputTests {
    struct Opaque: Sendable {}
    struct Throwing: Encodable, Sendable {
        func encode(to encoder: any Encoder) throws {
            throw EncodingError.invalidValue(self, .init(codingPath: [], debugDescription: "refuses to encode"))
        }
    }

    static let cases: [(String, Request<JSON>)] = [
        ("empty URL", Request<JSON>("")),
        ("space in scheme", Request<JSON>("ht tp://")),
        ("ftp scheme", Request<JSON>("ftp://x")),
        ("CRLF in header", Request<JSON>("http://127.0.0.1:9/x", headers: ["X-Evil": "a\r\nInjected: yes"])),
        ("CR in header name", Request<JSON>("http://127.0.0.1:9/x", headers: ["X-Bad\r": "v"])),
        ("unencodable query value", Request<JSON>("http://127.0.0.1:9/x", query: ["v": Opaque()])),
        ("unencodable JSON value", Request<JSON>("http://127.0.0.1:9/x", method: .post, body: .json(["v": Double.nan]))),
        ("throwing Encodable", Request<JSON>("http://127.0.0.1:9/x", method: .post, body: .json(Throwing()))),
        ("body on GET", Request<JSON>("http://127.0.0.1:9/x", body: .data(Data([1])))),
    ]

    static func isInvalidRequest(_ error: TernError?) -> Bool {
        if case .invalidRequest = error { return true }
        return false
    }

    @Test(arguments: cases.indices)
    func completionClosureGetsTheTypedError(index: Int) async {
        let (name, request) = Self.cases[index]
        let (result, _) = await Client.shared.completionResult(request)
        #expect(Self.isInvalidRequest(result.failure), "\(name): \(result)")
    }

    @Test(arguments: cases.indices)
    func failureClosureGetsTheTypedError(index: Int) async {
        let (name, request) = Self.cases[index]
        let result = await Client.shared.pairResult(request)
        #expect(Self.isInvalidRequest(result.failure), "\(name): \(result)")
    }

    @Test(arguments: cases.indices)
    func delegateGetsTheTypedError(index: Int) async {
        let (name, request) = Self.cases[index]
        let result = await Client.shared.delegateResult(request)
        #expect(Self.isInvalidRequest(result.failure), "\(name): \(result)")
    }

    @Test(arguments: cases.indices)
    func asyncCallThrowsTheTypedError(index: Int) async {
        let (name, request) = Self.cases[index]
        do {
            _ = try await Client.shared.send(request)
            Issue.record("\(name): expected an error")
        } catch {
            #expect(Self.isInvalidRequest(error), "\(name): \(error)")
        }
    }

    @Test func errorDescriptionsSayWhatIsWrong() {
        #expect(TernError.invalidRequest(.unsupportedScheme("ftp")).description.contains("ftp"))
        #expect(
            TernError.unacceptableStatus(code: 404, body: Data("nope".utf8), headers: [:]).description
                == "HTTP status 404 Not Found — body (4 bytes): nope")
        #expect(TernError.timedOut(after: 0.5).isTimeout)
        #expect(TernError.cancelled(.explicit).isCancelled)
    }
}
