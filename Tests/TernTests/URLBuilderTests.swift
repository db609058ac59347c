import Foundation
import Testing
@testable import Tern

@Suite struct URLBuilderTests {
    func url(_ path: String, base: String? = "https://api.example.com/v1", _ parameters: Parameters = [:]) throws -> String {
        try URLBuilder.makeURL(path, baseURL: base, parameters: parameters, encoding: .default).absoluteString
    }

    @Test(arguments: [
        ("https://h/v1", "users", "https://h/v1/users"),
        ("https://h/v1/", "users", "https://h/v1/users"),
        ("https://h/v1/", "/users", "https://h/v1/users"),
        ("https://h/v1", "/users/", "https://h/v1/users/"),
        ("https://h", "", "https://h"),
        ("https://h/v1", "?page=2", "https://h/v1?page=2"),
        ("https://h/v1", "http://other.example/x", "http://other.example/x"),
    ])
    func joinsBaseAndPathWithExactlyOneSlash(base: String, path: String, expected: String) throws {
        #expect(try url(path, base: base) == expected)
    }

    @Test func mergesParametersWithExistingQueryInSortedOrder() throws {
        #expect(try url("search?z=1&b=x%20y", ["a": "北", "c": "+"]) == "https://api.example.com/v1/search?a=%E5%8C%97&b=x%20y&c=%2B&z=1")
    }

    @Test func encodesCharactersAURLCannotHold() throws {
        #expect(try url("城市/a b", base: "https://h") == "https://h/%E5%9F%8E%E5%B8%82/a%20b")
        #expect(try url("100%", base: "https://h") == "https://h/100%25")
        #expect(try url("x%20y", base: "https://h") == "https://h/x%20y")
    }

    @Test func badURLsAreTypedErrors() {
        func reason(_ path: String, base: String? = nil) -> TernError.InvalidRequestReason? {
            do {
                _ = try URLBuilder.makeURL(path, baseURL: base, parameters: [:], encoding: .default)
                return nil
            } catch {
                if case .invalidRequest(let reason) = error { return reason }
                return nil
            }
        }
        #expect(reason("") == .emptyURL)
        #expect(reason("ht tp://") == .malformedURL("ht tp://"))
        #expect(reason("ftp://x") == .unsupportedScheme("ftp"))
        #expect(reason("users") == .missingBaseURL(path: "users"))
        #expect(reason("http://") == .malformedURL("http://"))
        #expect(reason("x/y://z", base: "https://h") == .malformedURL("x/y://z"))
        #expect(reason("x/y:/z:x//", base: "https://h") == nil)
        #expect(reason("users", base: "file:///tmp") == .unsupportedScheme("file"))
    }

    /// Literal brackets: older Apple systems (macOS 13, iOS 16) refuse them in a path or query,
    /// so Tern encodes them there — and keeps them where they belong, around an IPv6 host.
    @Test func bracketsAreEncodedInPathsAndQueriesButNotAroundAnIPv6Host() throws {
        #expect(try url("items[0]/x", base: "https://h") == "https://h/items%5B0%5D/x")
        #expect(try url("search?filter[city]=bj", base: "https://h") == "https://h/search?filter%5Bcity%5D=bj")
        #expect(try url("search?filter[city]=bj", base: "https://h", ["page": 2]) == "https://h/search?filter%5Bcity%5D=bj&page=2")
        #expect(try url("status", base: "http://[::1]:8080/v1") == "http://[::1]:8080/v1/status")
        #expect(try url("a[1]", base: "http://[::1]:8080", ["q": "x"]) == "http://[::1]:8080/a%5B1%5D?q=x")
        #expect(try URLBuilder.makeURL("http://[::1]:8080/x", baseURL: nil, parameters: [:], encoding: .default).host == "::1")
    }
}
