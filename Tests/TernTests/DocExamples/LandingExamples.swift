// swift-format-ignore-file
import Foundation
import Tern

// The code of the catalogs' landing pages (Sources/*/*.docc/<Module>.md), compiled here; see
// DocSamplesTests. Not reformatted: the pages show these lines.

func landingFirstRequest() async throws {
    let weatherAPI = Client(baseURL: "https://api.weather.example/v1")
    let cities = try await weatherAPI.send(Request<[City]>("search", query: ["q": "bei"])).value
    render(cities)
}
