// swift-format-ignore-file
import Foundation
import Testing
import Tern
import TernStubs

// The code samples of the migration guides (Sources/Tern/Tern.docc/ComingFrom*.md), compiled
// here; DocSamplesTests checks that every ```swift block of the DocC articles appears in the
// files of this folder or in ReadmeExamples.swift. Not reformatted: the articles show these lines.

func afManagers(deviceID: String, current: PublicKeyPin, backup: PublicKeyPin) -> Client {
    // AFHTTPSessionManager(baseURL:) with its serializers, timeout and security policy
    let api = Client(baseURL: "https://api.example.com/v1") {
        $0.bodyEncoding = .json                                   // AFJSONRequestSerializer
        // requestSerializer's HTTP headers
        $0.headers["X-Device"] = deviceID
        $0.timeout = 20                                           // timeoutInterval
        // acceptableContentTypes
        $0.validation.acceptableContentTypes = ["application/json", "text/json"]
        // AFSecurityPolicy
        $0.transportSettings.tls.pinning = ServerPinning(
            ["api.example.com": .publicKeys([current], backups: [backup])])
    }
    return api
}

func afCalls(api: Client, photo: URL) async throws {
    // [manager GET:parameters:headers:progress:success:failure:]
    api.send(Request<JSON>("cities", query: ["q": "bei"]),
             success: { json in show(json) }, failure: { error in alert(error) })

    // [manager POST:parameters:constructingBodyWithBlock:progress:success:failure:]
    let upload = Request<JSON>("photos", method: .post, body: .multipart { form in
        form.append("北京", name: "city")
        form.append(fileAt: photo, name: "photo")
    }).onUploadProgress { progress in print(progress.fractionCompleted ?? 0) }
    _ = try await api.send(upload)

    // [manager downloadTaskWithRequest:progress:destination:completionHandler:]
    let folder = photo.deletingLastPathComponent()
    let radar = Request.download("radar", to: folder.appendingPathComponent("radar.png"),
        options: DownloadOptions(replacesExistingFile: true, isResumable: true))
    let file = try await api.send(radar.onDownloadProgress { print($0.completedBytes) }).value
    print(file.url.path)

    // [task cancel], and [manager.tasks makeObjectsPerformSelector:@selector(cancel)]
    let handle = api.send(Request<JSON>("forecast")) { _ in }
    handle.cancel()
    api.cancelAll()
}

func afReachability() {
    // AFNetworkReachabilityManager's setReachabilityStatusChangeBlock:
    let token = NetworkMonitor.system.onChange { status in
        print(status.isReachable ? "online" : "offline")
    }
    _ = token
}

enum YBExample {
    // A YBBaseRequest subclass per API team becomes an APIGroup; one per endpoint, an Endpoint.
    static let team = APIGroup("weather", baseURL: "https://api.weather.example/v2") {
        $0.headers["X-App-Version"] = "2.4"
        // yb_preprocessParameter:
        $0.hooks.rewriteParameters { parameters in parameters.query["device_id"] = "d-1" }
        // yb_preprocessURLString:
        $0.hooks.rewriteURL { url in url }
    }

    struct Forecast: Endpoint {
        typealias Value = JSON
        let city: String
        var group: APIGroup { YBExample.team }
        var path: String { "forecast" }                                  // requestURI
        var method: HTTPMethod { .get }                                  // requestMethod
        var parameters: Parameters { ["city": city] }                    // requestParameter
        // repeatStrategy = YBNetworkRepeatStrategyCancelOldest
        var repeatStrategy: RepeatStrategy? { .cancelOlder }
        var cachePolicy: CachePolicy? {                                  // cacheHandler
            // readMode = YBNetworkCacheReadModeAlsoNetwork
            CachePolicy(read: .cacheThenNetwork,
                        // writeMode = YBNetworkCacheWriteModeMemoryAndDisk
                        write: .both,
                        maxAge: 600,                                     // ageSeconds
                        namespace: "v2.4",                               // extraCacheKey
                        shouldStore: { $0.json?["code"]?.int == 0 })     // shouldCacheBlock
        }
    }
}

func ybSend(api: Client, screen: AnyObject, delegate: any RequestDelegate) async throws {
    // [request startWithSuccess:failure:], with the request released when its screen goes
    var forecast = Request<JSON>("forecast", query: ["city": "101010100"])
    // releaseStrategy = YBNetworkReleaseStrategyWhenRequestDealloc
    forecast.lifetime = .owner(screen)
    api.send(forecast, success: { json in show(json) }, failure: { error in alert(error) })

    // request.delegate = self (YBResponseDelegate), and the cache's hit callback
    api.send(YBExample.Forecast(city: "101010100"), delegate: delegate)
    api.send(YBExample.Forecast(city: "101010100"),
             cached: { hit in show(hit.value) }, completion: { _ in })

    // the AsyncAwait style YBNetwork does not have
    let fresh = try await api.send(YBExample.Forecast(city: "101010100")).value
    show(fresh)
}

func ybRedirection(login: RestartGate) -> Client {
    Client(baseURL: "https://api.example.com") {
        // yb_redirection:response: — decide on a response before it is validated and delivered
        $0.hooks.rule("redirection") { response in
            switch response.json?["code"]?.int {
            case 0?, nil:  // YBRequestRedirectionSuccess: validated and delivered as usual
                return .proceed
            case 1002?:    // YBRequestRedirectionStop, then start again once the user logged in
                return .restart(after: login)
            case let code?:  // YBRequestRedirectionFailure
                return .fail(.business(code: code, message: "", body: response.body))
            }
        }
        // yb_preprocessFailureInChildThreadWithResponse: / …InMainThreadWithResponse:
        $0.hooks.preprocessFailure { error, _ in error }
        $0.hooks.preprocessFailureOnMainThread { error, _ in
            if error.businessError?.code == 1003 { showUpgradeScreen() }
            return error
        }
    }
}

func alamofireRequests(api: Client) async throws {
    // AF.request(url, method: .post, parameters: body,
    //            encoder: JSONParameterEncoder.default, headers: headers)
    //   .validate().responseDecodable(of: City.self) { … }
    let create = Request<City>(
        "cities", method: .post, body: .json(["name": "成都"]), headers: ["X-Trace": "1"])
    api.send(create) { result in print(result) }

    // try await AF.request(url).serializingDecodable([City].self).value
    let cities = try await api.send(Request<[City]>("cities", query: ["q": "bei"])).value
    render(cities)

    // AF.streamRequest(url).responseStreamString { … }
    for try await line in api.stream(Request<Data>("completions")).lines { print(line) }

    // request.cURLDescription()
    print(try api.curlCommand(for: Request<JSON>("cities")))
}

func alamofireSession(auth: Authentication<TokenRefresher>) -> Client {
    // Session(configuration:, interceptor:, serverTrustManager:, redirectHandler:, eventMonitors:)
    Client(baseURL: "https://api.example.com") {
        $0.hooks.adapt { request, _ in request }                  // RequestAdapter.adapt
        $0.retryPolicy = .exponential(maxAttempts: 3)             // RetryPolicy (RequestRetrier)
        $0.hooks.authenticate(with: auth)                         // AuthenticationInterceptor
        $0.redirectPolicy = RedirectPolicy(limit: 5)              // redirectHandler: Redirector
        // eventMonitors / ClosureEventMonitor
        $0.monitors = [RequestLogger.standardError(level: .info)]
        // cachedResponseHandler
        $0.cachePolicy = CachePolicy(read: .cacheElseNetwork, write: .both, maxAge: 60)
    }
}

enum MoyaExample {
    // enum WeatherTarget: TargetType { case forecast(city:) … } becomes one Endpoint per case
    // TargetType.baseURL
    static let api = APIGroup("weather", baseURL: "https://api.weather.example/v2")

    struct Forecast: Endpoint {
        typealias Value = [City]
        let city: String
        var group: APIGroup { MoyaExample.api }
        var path: String { "forecast" }                                 // TargetType.path
        var method: HTTPMethod { .get }                                 // TargetType.method
        // .requestParameters(parameters:encoding:)
        var parameters: Parameters { ["city": city] }
        var headers: [String: String] { ["Accept-Language": "zh-CN"] }  // TargetType.headers
        var validation: ResponseValidation? { .default }                // validationType
    }
}

func moyaProvider() async throws {
    // MoyaProvider<WeatherTarget>(stubClosure: MoyaProvider.immediatelyStub), sampleData
    let stubs = StubTransport()
    stubs.stub(.get("/v2/forecast"), .json([["name": "北京"]]))
    let provider = Client(baseURL: "https://api.weather.example") { $0.transport = stubs }
    // provider.request(.forecast(city: "beijing")) { result in … }
    let cities = try await provider.send(MoyaExample.Forecast(city: "beijing")).value
    render(cities)
}

@Suite struct MigrationExampleTests {
    @Test func theMoyaStubSampleRuns() async throws {
        try await moyaProvider()
    }
}

func alamofireTransfers(api: Client, photo: URL, folder: URL) async throws {
    // AF.upload(multipartFormData: { $0.append(…) }, to: url).uploadProgress { … }
    let upload = Request<JSON>("photos", method: .post, body: .multipart { form in
        form.append(fileAt: photo, name: "photo")
    }).onUploadProgress { progress in print(progress.fractionCompleted ?? 0) }
    _ = try await api.send(upload)

    // AF.download(url, to: destination).downloadProgress { … }, and resumeData on failure
    let options = DownloadOptions(replacesExistingFile: true, isResumable: true)
    let radar = Request.download("radar.png", to: folder.appendingPathComponent("radar.png"),
        options: options)
    let file = try await api.send(radar.onDownloadProgress { print($0.completedBytes) }).value
    print(file.url.path, file.resumedFrom)

    // session.cancelAllRequests()
    api.cancelAll()
}

func alamofireSessionSettings() -> Client {
    Client(baseURL: "https://api.example.com") {
        // .authenticate(username:password:) on every request
        $0.transportSettings.credential = BasicCredential(user: "li", password: "secret")
        // RetryPolicy(retryLimit: 2): two retries are three attempts
        $0.retryPolicy = RetryPolicy(maxAttempts: 3)
    }
}

enum MoyaTasks {
    // .requestCompositeParameters(bodyParameters: ["name": "成都"],
    //                             bodyEncoding: JSONEncoding.default,
    //                             urlParameters: ["page": 2])
    struct CreateCity: Endpoint {
        typealias Value = JSON
        var group: APIGroup { MoyaExample.api }
        var path: String { "cities" }
        var method: HTTPMethod { .post }
        var parameters: Parameters { ["page": 2] }             // urlParameters: a body is set
        var body: RequestBody? { .parameters(["name": "成都"], encoding: .json) }
    }

    // .uploadMultipart([MultipartFormData(provider: .file(url), name: "photo")])
    struct UploadPhoto: Endpoint {
        typealias Value = JSON
        let photo: URL
        var group: APIGroup { MoyaExample.api }
        var path: String { "photos" }
        var method: HTTPMethod { .post }
        var body: RequestBody? { .multipart { $0.append(fileAt: photo, name: "photo") } }
    }

    // .requestParameters(parameters: ["q": "bei"], encoding: JSONEncoding.default) on a GET
    struct Search: Endpoint {
        typealias Value = JSON
        var group: APIGroup { MoyaExample.api }
        var path: String { "search" }
        var parameters: Parameters { ["q": "bei"] }
        var parameterDestination: ParameterDestination { .body(.json) }
    }
}

/// The Moya guide's composite task: the body as JSON, the parameters in the query.
@Test func moyaCompositeParametersGoToTheQueryBesideTheBody() async throws {
    let stubs = StubTransport()
    stubs.stub(.post("/v2/cities"), .json(["id": 7]))
    let client = Client(baseURL: "https://api.weather.example") { $0.transport = stubs }
    #expect(try await client.send(MoyaTasks.CreateCity()).value["id"]?.int == 7)
    let sent = try #require(stubs.received(.post("/v2/cities")).first)
    #expect(sent.url?.query == "page=2")
    #expect(sent.value(forHTTPHeaderField: "Content-Type")?.hasPrefix("application/json") == true)
}
