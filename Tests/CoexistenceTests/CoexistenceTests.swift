import AlamofireNames
import Foundation
import MoyaNames
import Tern
import TernStubs
import Testing

// A file that imports Tern beside modules declaring Alamofire's and Moya's clashing names
// (`AlamofireNames`, `MoyaNames`): it compiles, with the everyday names given to Tern once
// (`TernNames.swift`) and the others written `Tern.…`, and each library's types stay reachable.

struct Forecast: Tern.Endpoint {
    typealias Value = JSON
    let city: String
    var group: APIGroup { APIGroup("weather", baseURL: "https://api.test/v2") }
    var path: String { "forecast" }
    var method: HTTPMethod { .get }
    var parameters: Tern.Parameters { ["city": city] }
}

func coexistingRequests() -> (Request<JSON>, Request<Tern.Empty>) {
    var upload = Tern.MultipartFormData()
    upload.append("北京", name: "city")
    var post = Request<Tern.Empty>("photos", method: .post, body: .multipart(upload))
    post.retryPolicy = Tern.RetryPolicy.exponential(maxAttempts: 3)
    return (Request<JSON>("search", query: ["q": "bei"]), post)
}

@Suite struct CoexistenceTests {
    @Test func ternRequestsRunBesideAlamofireAndMoyaNames() async throws {
        let stubs = StubTransport()
        stubs.stub(.get("/v1/search"), .json(["cities": ["北京"]]))
        stubs.stub(.post("/v1/photos"), .status(204))
        stubs.stub(.get("/v2/forecast"), .json(["temp": 3]))
        let client = Client(baseURL: "https://api.test/v1") { $0.transport = stubs }
        let (search, post) = coexistingRequests()
        let found: Response<JSON> = try await client.send(search)
        #expect(found.value["cities"]?[0]?.string == "北京")
        _ = try await client.send(post).value
        #expect(
            stubs.received(.post("/v1/photos")).first?.value(forHTTPHeaderField: "Content-Type")?
                .hasPrefix("multipart/form-data") == true)
        #expect(try await client.send(Forecast(city: "beijing")).value["temp"]?.int == 3)

        // The other libraries' types are still there, under their own module names.
        _ = (AlamofireNames.Request(), AlamofireNames.HTTPMethod(rawValue: "GET"), AlamofireNames.Empty())
        _ = (MoyaNames.Endpoint(), MoyaNames.Response())
        let alamofireParameters: AlamofireNames.Parameters = ["q": "bei"]
        #expect(alamofireParameters.count == 1)
    }
}
