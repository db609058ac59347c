import Foundation
import Testing
@testable import Tern

/// Cookies behave the same over both transports: a `Set-Cookie` on a redirect Tern follows is
/// stored in `HTTPCookieStorage.shared` and sent back on the next requests.
@Suite(.serialized) struct CookieTests {
    @Test(arguments: TransportKind.all)
    func cookiesRoundTripThroughTheSharedStorage(over transport: TransportKind) async throws {
        let base = try TestServers.httpbin()
        let client = Client(baseURL: base) {
            $0.callbackQueue = .immediate
            transport.configure(&$0)
        }
        let name = "tern_\(transport.rawValue)_\(UInt32.random(in: 0 ... .max))"
        defer {
            for cookie in HTTPCookieStorage.shared.cookies ?? [] where cookie.name == name { HTTPCookieStorage.shared.deleteCookie(cookie) }
        }
        // httpbin sets the cookie on a 302 to /cookies: Tern follows it, the cookie goes along.
        let set = try await client.send(Request<JSON>("cookies/set", query: [name: "beijing"]))
        #expect(set.redirects.count == 1)
        #expect(set.json["cookies"]?[name]?.string == "beijing")
        #expect(HTTPCookieStorage.shared.cookies(for: URL(string: base)!)?.contains { $0.name == name } == true)
        let later = try await client.send(Request<JSON>("cookies"))
        #expect(later.json["cookies"]?[name]?.string == "beijing")
    }
}
