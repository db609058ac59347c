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
        $0.headers["X-Device"] = deviceID                         // requestSerializer's HTTP headers
        $0.timeout = 20                                           // timeoutInterval
        $0.validation.acceptableContentTypes = ["application/json", "text/json"]   // acceptableContentTypes
        $0.transportSettings.tls.pinning = ServerPinning(["api.example.com": .publicKeys([current], backups: [backup])])  // AFSecurityPolicy
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
    let radar = Request.download("radar", to: photo.deletingLastPathComponent().appendingPathComponent("radar.png"),
                                 options: DownloadOptions(replacesExistingFile: true, isResumable: true))
    let file = try await api.send(radar.onDownloadProgress { print($0.completedBytes) }).value
    print(file.url.path)

    // [task cancel], and [manager.operationQueue cancelAllOperations]
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
        $0.hooks.rewriteParameters { parameters in parameters.query["device_id"] = "d-1" }  // yb_preprocessParameter:
        $0.hooks.rewriteURL { url in url }                                                  // yb_preprocessURLString:
    }

    struct Forecast: Endpoint {
        typealias Value = JSON
        let city: String
        var group: APIGroup { YBExample.team }
        var path: String { "forecast" }                                  // requestURI
        var method: HTTPMethod { .get }                                  // requestMethod
        var parameters: Parameters { ["city": city] }                    // requestParameter
        var repeatStrategy: RepeatStrategy? { .cancelOlder }             // repeatStrategy = YBNetworkRepeatStrategyCancelOldest
        var cachePolicy: CachePolicy? {                                  // cacheHandler
            CachePolicy(read: .cacheThenNetwork,                         // readMode = YBNetworkCacheReadModeAlsoNetwork
                        write: .both,                                    // writeMode = YBNetworkCacheWriteModeMemoryAndDisk
                        maxAge: 600,                                     // ageSeconds
                        namespace: "v2.4",                               // extraCacheKey
                        shouldStore: { $0.json?["code"]?.int == 0 })     // shouldCacheBlock
        }
    }
}

func ybSend(api: Client, screen: AnyObject, delegate: any RequestDelegate) async throws {
    // [request startWithSuccess:failure:], with the request released when its screen goes
    var forecast = Request<JSON>("forecast", query: ["city": "101010100"])
    forecast.lifetime = .owner(screen)                                   // releaseStrategy = YBNetworkReleaseStrategyWhenRequestDealloc
    api.send(forecast, success: { json in show(json) }, failure: { error in alert(error) })

    // request.delegate = self (YBResponseDelegate), and the cache's hit callback
    api.send(YBExample.Forecast(city: "101010100"), delegate: delegate)
    api.send(YBExample.Forecast(city: "101010100"), cached: { hit in show(hit.value) }, completion: { _ in })

    // the AsyncAwait style YBNetwork does not have
    let fresh = try await api.send(YBExample.Forecast(city: "101010100")).value
    show(fresh)
}

func ybRedirection(login: RestartGate) -> Client {
    Client(baseURL: "https://api.example.com") {
        // yb_redirection:response: — decide on a response before it is validated and delivered
        $0.hooks.rule("redirection") { response in
            switch response.json?["code"]?.int {
            case 0?: return .proceed                                  // YBRequestRedirectionTypeToSuccess (then validated)
            case 1002?: return .restart(after: login)                 // hold until the user logged in, then send again
            case let code?: return .fail(.business(code: code, message: "", body: response.body))  // ToFailure
            case nil: return .proceed
            }
        }
        // yb_preprocessFailureInChildThread: / yb_preprocessFailureInMainThread:
        $0.hooks.preprocessFailure { error, _ in error }
        $0.hooks.preprocessFailureOnMainThread { error, _ in
            if error.businessError?.code == 1003 { showUpgradeScreen() }
            return error
        }
    }
}

func alamofireRequests(api: Client) async throws {
    // AF.request(url, method: .post, parameters: body, encoder: JSONParameterEncoder.default, headers: headers)
    //   .validate().responseDecodable(of: City.self) { … }
    let create = Request<City>("cities", method: .post, body: .json(["name": "成都"]), headers: ["X-Trace": "1"])
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
        $0.monitors = [RequestLogger.standardError(level: .info)] // eventMonitors / ClosureEventMonitor
        $0.cachePolicy = CachePolicy(read: .cacheElseNetwork, write: .both, maxAge: 60)  // cachedResponseHandler
    }
}

enum MoyaExample {
    // enum WeatherTarget: TargetType { case forecast(city:) … } becomes one Endpoint per case
    static let api = APIGroup("weather", baseURL: "https://api.weather.example/v2") // TargetType.baseURL

    struct Forecast: Endpoint {
        typealias Value = [City]
        let city: String
        var group: APIGroup { MoyaExample.api }
        var path: String { "forecast" }                                 // TargetType.path
        var method: HTTPMethod { .get }                                 // TargetType.method
        var parameters: Parameters { ["city": city] }                   // .requestParameters(parameters:encoding:)
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
