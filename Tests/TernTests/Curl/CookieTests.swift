import Foundation
import Testing
@testable import Tern

/// Cookies behave the same over both transports: a `Set-Cookie` on a redirect Tern follows is
/// stored in the client's cookie storage and sent back on its next requests. Each client here has
/// a storage of its own: the process-wide one would hand the cookie to other tests' requests (on
/// Linux even outside its `Path`).
@Suite struct CookieTests {
    @Test(arguments: TransportKind.all)
    func cookiesRoundTripThroughTheClientsStorage(over transport: TransportKind) async throws {
        let base = try TestServers.fixture()
        let jar = HTTPCookieStorage.sharedCookieStorage(forGroupContainerIdentifier: "tern-tests-\(transport.rawValue)")
        defer { jar.cookies?.forEach(jar.deleteCookie) }
        let client = Client(baseURL: base) {
            $0.callbackQueue = .immediate
            $0.transportSettings.cookieStorage = jar
            transport.configure(&$0)
        }
        let name = "tern_\(transport.rawValue)_\(UInt32.random(in: 0 ... .max))"
        let set = try await client.send(Request<JSON>("cookie-jar/set", query: [name: "beijing"]))
        #expect(set.redirects.count == 1)
        #expect(set.json["cookie"]?.string == "\(name)=beijing")
        #expect(jar.cookies?.contains { $0.name == name && $0.path == "/cookie-jar" } == true)
        #expect(HTTPCookieStorage.shared.cookies?.contains { $0.name == name } != true)
        let later = try await client.send(Request<JSON>("cookie-jar/show"))
        #expect(later.json["cookie"]?.string == "\(name)=beijing")
    }
}
