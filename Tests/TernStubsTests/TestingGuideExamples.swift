// swift-format-ignore-file
import Foundation
import Tern
import TernStubs
import Testing
import XCTest

// The testing guide's complete examples (Sources/Tern/Tern.docc/TestingWithTernStubs.md), compiled
// and run here: app code, then a Swift Testing and an XCTest test of it. Not reformatted: the
// article shows these lines.

@MainActor final class ForecastModel {
    private(set) var text = ""
    private let api: Client

    init(api: Client) { self.api = api }

    func load(city: String) async {
        do {
            let request = Request<JSON>("forecast", query: ["city": city])
            let forecast = try await api.send(request).value
            text = "\(forecast["city"]?.string ?? city): \(forecast["temp"]?.int ?? 0)°C"
        } catch {
            text = error.localizedDescription   // what an alert would show
        }
    }
}

@MainActor @Test func theModelShowsTheForecast() async throws {
    let stubs = StubTransport()
    stubs.stub(.get("/v1/forecast"), .json(["city": "北京", "temp": 3]))
    let api = Client(baseURL: "https://api.test/v1") { $0.transport = stubs }
    let model = ForecastModel(api: api)

    await model.load(city: "101010100")

    #expect(model.text == "北京: 3°C")
    let sent = try #require(stubs.received(.get("/v1/forecast")).first)
    #expect(sent.url?.query == "city=101010100")
}

@MainActor @Test func theModelSaysWhatWentWrong() async {
    let stubs = StubTransport()
    stubs.stub(.get("/v1/forecast"), .status(404))
    let api = Client(baseURL: "https://api.test/v1") { $0.transport = stubs }
    let model = ForecastModel(api: api)

    await model.load(city: "0")

    #expect(model.text == "The requested item could not be found.")
}

final class ForecastModelTests: XCTestCase {
    @MainActor func testTheModelShowsTheForecast() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/v1/forecast"), .json(["city": "北京", "temp": 3]))
        let api = Client(baseURL: "https://api.test/v1") { $0.transport = stubs }
        let model = ForecastModel(api: api)

        await model.load(city: "101010100")

        XCTAssertEqual(model.text, "北京: 3°C")
        XCTAssertEqual(stubs.received(.get("/v1/forecast")).first?.url?.query, "city=101010100")
    }
}

@Test func stubbedLiveScreen() async throws {
    let stubs = StubTransport()
    let live = StubWebSocket(greeting: [.send(.text("hello"))]) { message in
        guard message == .text("subscribe") else { return [.close(.policyViolation, reason: "")] }
        return [.send(.text("3°C"))]
    }
    stubs.stubWebSocket(.get("/v1/live"), live)
    let api = Client(baseURL: "https://api.test/v1") { $0.transport = stubs }
    let socket = api.webSocket(Request<Data>("live"))
    try await socket.send("subscribe")
    var messages = socket.messages.makeAsyncIterator()
    #expect(try await messages.next() == .text("hello"))
    #expect(try await messages.next() == .text("3°C"))
}
