// swift-format-ignore-file
import Foundation
import Testing
import Tern
import TernStubs
import TernCache

// The README's code samples, compiled here; ReadmeExamplesTests checks that every ```swift block
// of the README appears in this file verbatim (indentation aside), and runs them against httpbin.
// Not reformatted (swift-format-ignore-file above): the README shows the lines as written here.

struct City: Decodable, Sendable { let name: String }
func show(_ json: JSON) {}
func alert(_ error: TernError) {}
func render(_ cities: [City]) {}

func readmeOneLiner() {
    Client.shared.get("https://httpbin.org/get", parameters: ["q": "北京", "lang": "zh"]) { result in
        switch result {
        case .success(let response): show(response.json)
        case .failure(.cancelled(.superseded)): break  // a newer get of this URL replaced it
        case .failure(let error): alert(error)
        }
    }
}

func readmeClientPerServer(deviceID: String) -> Client {
    let weatherAPI = Client(baseURL: "https://api.weather.example/v1") {
        $0.timeout = 15      // 15 s without a byte fails the attempt
        $0.deadline = 60     // the whole request, retries and waits included
        $0.headers["X-Device"] = deviceID
        $0.validation.acceptableContentTypes = ["application/json", "text/plain"]
    }
    return weatherAPI
}

func readmeThreeStyles(weatherAPI: Client, delegate: any RequestDelegate) async throws {
    let search = Request<[City]>("search", query: ["q": "bei"])

    // 1. closures: one Result, or a success / failure pair (main queue by default)
    weatherAPI.send(search) { result in print(result) }
    weatherAPI.send(search, success: { cities in render(cities) }, failure: { error in alert(error) })

    // 2. a delegate, held weakly
    weatherAPI.send(search, delegate: delegate)

    // 3. async/await; cancelling the Task cancels the request
    let cities = try await weatherAPI.send(search).value
    render(cities)
}

func readmeRequests() {
    let login = Request<JSON>("login", method: .post, body: .json(["user": "li", "remember": true]))
    let form = Request<JSON>("profile", method: .put, body: .form(["name": "张三", "tags": ["a", "b"]]))
    var page = Request<String>(
        "https://example.com/page", headers: ["Accept-Language": "zh-CN"], timeout: 0.5)
    page.callbackQueue = .queue(DispatchQueue(label: "parsing"))
    let handle = Client.shared.send(page) { _ in }
    handle.cancel()
    _ = (login, form)
}

func readmeErrors(_ result: Result<Response<JSON>, TernError>) {
    switch result {
    case .success(let response):
        print(response.statusCode, response.json["code"]?.int ?? -1, response.timing.duration)
    case .failure(.unacceptableStatus(let code, let body, _, _)):
        print("HTTP \(code): \(String(decoding: body, as: UTF8.self))")
    case .failure(.timedOut(let seconds)):
        print("no answer within \(seconds) s")
    case .failure(let error):
        print(error)  // every case has a one-line description
    }
}

func readmeCancelling(api: Client) {
    let forecast = Request<JSON>("forecast", query: ["city": "101010100"]).tagged("home")
    let handle = api.send(forecast) { _ in }
    handle.cancel()                                         // this one
    // every request with this URL (query in any order)
    api.cancel(url: "forecast?city=101010100")
    api.cancel(url: "forecast", matching: .ignoringQuery)   // same path, any query
    api.cancel(tag: "home")                                 // every request carrying the tag
    api.cancelAll()                                         // everything this client has in flight
}

func readmeStrategies(text: String) {
    let search = Request<[City]>("search", query: ["q": text]).repeating(.cancelOlder, key: "search")
    let favourites = Request<JSON>("favourites").repeating(.share)
    _ = (search, favourites)
}

func readmeLifetimes(api: Client) {
    func showDetail(of screen: AnyObject) {
        let detail = Request<JSON>("detail", query: ["city": "101010100"]).owned(by: screen)
        api.send(detail) { _ in }
    }
    _ = showDetail
}

func readmeProgress(weatherAPI: Client) async throws -> Data {
    let radar = Request<Data>("radar").onProgress { progress in
        if progress.direction == .download, let fraction = progress.fractionCompleted {
            print("\(Int(fraction * 100))% of \(progress.expectedBytes ?? 0) bytes")
        }
    }
    let image = try await weatherAPI.send(radar).value
    return image
}

func cachingServerPolicy() async throws {
    let api = Client(baseURL: "https://api.example.com") { $0.cachePolicy = .http }
    let forecast = try await api.send(Request<JSON>("forecast/chengdu"))   // fresh for max-age seconds
    // forecast.source: .network, .cache, .revalidated (a 304 confirmed the entry) or .stale
    _ = forecast
}

func readmeCachePolicy(weatherAPI: Client) async throws {
    let forecastPolicy = CachePolicy(
        read: .cacheThenNetwork,              // cached value first, then the network's
        write: .both,                         // memory and disk
        maxAge: 600,                          // seconds; 0 = never expires
        keyHeaders: ["Accept-Language"],      // headers that make a different entry
        ignoredParameters: ["ts", "nonce"],   // parameters that do not
        namespace: "app-2.3",                 // a new version misses every old entry
        shouldStore: { $0.json?["code"]?.int == 0 },   // only business successes
        servesStaleOnError: true)             // offline: the cached value, marked .stale
    let forecast = Request<JSON>("forecast", query: ["city": "101010100"]).caching(forecastPolicy)

    weatherAPI.send(forecast, cached: { cached in show(cached.json) }, completion: { result in
        // fresh.source: .network, .revalidated or .stale
        if case .success(let fresh) = result { show(fresh.json) }
    })
    for try await response in weatherAPI.responses(for: forecast) { show(response.json) }
    // the first acceptable: cached if fresh, else network
    let first = try await weatherAPI.send(forecast)
    _ = first
}

struct Forecast: Codable, Sendable {
    let highs: [Int]
}

func readmeCache(png: Data, url: String, body: Data, headers: Data, forecast: Forecast, cachesDirectory: URL) async throws {
    let thumbnails = MemoryCache<String, Data>(countLimit: 500, costLimit: 50 << 20, ageLimit: 600)
    thumbnails.setValue(png, forKey: url, cost: png.count)
    let thumbnail = thumbnails.value(forKey: url)

    var settings = DiskCache.Configuration()
    settings.sizeLimit = 100 << 20          // bytes
    settings.ageLimit = 7 * 24 * 3600       // seconds since the last access
    let folder = cachesDirectory.appendingPathComponent("responses")
    let responses = try DiskCache.open(folder, configuration: settings)
    try responses.setData(body, forKey: "GET https://api.example/v1/cities", extendedData: headers)

    let cache = try Cache(directory: cachesDirectory.appendingPathComponent("weather"))
    try cache.setValue(forecast, forKey: "forecast/101010100")
    let cached = try cache.value(Forecast.self, forKey: "forecast/101010100")
    let item = try await cache.readItem(forKey: "forecast/101010100")
    #expect(thumbnail == png && cached?.highs == forecast.highs && item != nil)
}

func readmeStubs() -> [URLRequest] {
    let stubs = StubTransport()
    stubs.stub(.get("/v1/weather").query(["city": "101010100"]), .json(["city": "北京", "temp": 3]))
    stubs.stub(.get("/v1/cities/*/forecast"), StubResponse.json(text: "[]").delayed(by: 0.2))
    stubs.stub(.get("/v1/flaky"), [.status(503), .json(["ok": true])])      // 503 first, then 200
    stubs.stub(.post("/v1/login").body(.contains("user=li")), .failure(.notConnectedToInternet))
    let api = Client(baseURL: "https://api.test/v1") { $0.transport = stubs }
    // … exercise your code, then assert on what it sent:
    let posted = stubs.received(.post("/v1/login"))
    _ = api
    return posted
}

func readmeRedirects(api: Client) async throws {
    // a 307/308 resends this body
    let login = Request<JSON>("login", method: .post, body: .json(["user": "li"]))
    let response = try await api.send(login)
    // e.g. [307 https://a/login → https://b/login] 2
    print(response.redirects, response.attempt)

    var exact = Request<JSON>("moved")
    exact.redirectPolicy = .never                       // deliver the 3xx itself
    let strict = Client(baseURL: "https://api.example.com") {
        $0.redirectPolicy = RedirectPolicy(limit: 3, sensitiveHeaders: ["X-Api-Key"])
    }
    _ = (exact, strict)
}

func readmeRetry() {
    let api = Client(baseURL: "https://api.example.com") {
        $0.retryPolicy = .exponential(maxAttempts: 4)          // GET, HEAD, PUT, DELETE, OPTIONS
    }
    var order = Request<JSON>(
        "orders", method: .post, body: .json(["sku": "A1"]), headers: ["Idempotency-Key": "k-42"])
    // this POST is safe to repeat
    order.retryPolicy = RetryPolicy.exponential(maxAttempts: 3).retryingAllMethods()
    api.send(order) { result in
        if case .failure(let error) = result {
            print(error.statusCode ?? 0, error.responseHeader("Retry-After") ?? "")
        }
    }
}

func sign(_ text: String) -> String { String(text.hashValue) }
func currentNonce() async -> String { UUID().uuidString }
@MainActor func showUpgradeScreen() {}

enum WeatherAPI {
    static let group = APIGroup("weather", baseURL: "https://api.weather.example/v2") {
        $0.headers["X-App-Version"] = "2.4"
        $0.bodyEncoding = .json                                  // POST parameters go as JSON
    }

    struct Search: Endpoint {
        typealias Value = [City]
        let text: String
        var group: APIGroup { WeatherAPI.group }
        var path: String { "search" }
        var parameters: Parameters { ["q": text] }
        var repeatStrategy: RepeatStrategy? { .cancelOlder }
    }

    static func search(query: String) -> Search { Search(text: query) }
}

func readmeDefinitions(client: Client) async throws {
    let cities = try await client.send(WeatherAPI.search(query: "bei")).value
    render(cities)
    client.send(WeatherAPI.search(query: "shang"), success: render, failure: alert)
    WeatherAPI.group.baseURL = "http://127.0.0.1:8080/v2"         // debug menu: a local mock server
}

func readmeRequestInAGroup(client: Client) async throws {
    var forecast = Request<JSON>("forecast", query: ["city": "101010100"])
    forecast.group = WeatherAPI.group       // its base URL, headers and defaults apply
    let answer = try await client.send(forecast)
    print(answer.request.url?.absoluteString ?? "")   // https://api.weather.example/v2/forecast?…
}

func readmeHooks(deviceID: String, login: RestartGate) -> Client {
    Client(baseURL: "https://api.example.com") {
        $0.hooks.rewriteParameters { parameters in               // every request of the team
            parameters.query["device_id"] = deviceID
        }
        // added last, runs last: sees the final parameters
        $0.hooks.rewriteParameters("sign") { parameters in
            parameters.query["sign"] = sign(try ParameterEncoding.default.encode(parameters.all))
        }
        $0.hooks.adapt { request, _ in                           // each attempt, asynchronously
            var request = request
            request.setValue(await currentNonce(), forHTTPHeaderField: "X-Nonce")
            return request
        }
        // code ≠ 0 → .business; 1002 waits for login
        $0.hooks.rules.append(BusinessRule(holding: [1002: login]))
        $0.hooks.preprocessFailureOnMainThread { error, _ in    // just before the callback
            if error.businessError?.code == 1003 { showUpgradeScreen() }
            return error
        }
    }
}

struct RefreshRejected: Error {}

struct TokenRefresher: Authenticator {
    func apply(_ token: String, to request: inout URLRequest) {
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    }

    func refresh(_ token: String) async throws -> String {
        let refresh = Request<JSON>("https://auth.example.com/refresh", method: .post,
            body: .json(["token": token]))
        let answer = try await Client.shared.send(refresh)
        guard let fresh = answer.value["token"]?.string else { throw RefreshRejected() }
        return fresh
    }
}

func readmeTokenRefresh(savedToken: String) -> Client {
    // at most 3 refreshes in 30 s
    let auth = Authentication(TokenRefresher(), credential: savedToken)
    return Client(baseURL: "https://api.example.com") { $0.hooks.authenticate(with: auth) }
}

func readmeLimits(client: Client) {
    var download = Request<Data>("exports/all.csv")
    // this one may be 1 GB (client default: 100 MB)
    download.maximumResponseSize = 1 << 30
    client.send(download) { result in
        if case .failure(.responseTooLarge(let limit)) = result {
            print("over \(limit) bytes: stopped")
        }
    }
}

func readmeMonitoring() throws {
    // hidden everywhere, with token, password, sign …
    Redaction.shared.parameterNames.insert("device_id")
    let api = Client(baseURL: "https://api.example.com") {
        $0.monitors = [RequestLogger.standardError(level: .info)]
    }
    print(try api.curlCommand(for: Request<JSON>("me", headers: ["Authorization": "Bearer abc"])))
    // curl \
    //   'https://api.example.com/me' \
    //   -H 'Authorization: <redacted>'
}

func readmeMetrics(api: Client) async throws {
    let response = try await api.send(Request<JSON>("forecast"))
    if let metrics = response.metrics {
        // HTTP/1.1 reused, dns 0.0 ms, connect 0.0 ms, first byte 0.4 ms, total 0.4 ms,
        // 0 B up, 1024 B down
        print(metrics)
    }
}

func readmePinning(current: PublicKeyPin, backup: PublicKeyPin, caFile: URL) -> Client {
    Client(baseURL: "https://api.example.com") {
        $0.transportSettings.tls.pinning = ServerPinning(
            ["api.example.com": .publicKeys([current], backups: [backup])])
        $0.transportSettings.tls.minimumVersion = .v1_2
        // a private authority, e.g. in staging
        $0.transportSettings.tls.certificateAuthorityFile = caFile
    }
}

func readmeNetworkStatus() async {
    let api = Client(baseURL: "https://api.example.com") {
        $0.networkMonitor = .system
        // or .waitForConnectivity (within the deadline)
        $0.offlineBehavior = .failFast
    }
    for await status in NetworkMonitor.system.updates.prefix(2) {
        print(status.isReachable ? "online" : "offline — showing cached data")
    }
    _ = api
}

func readmeMultipart(api: Client, photo: URL) async throws {
    let upload = Request<JSON>("photos", method: .post, body: .multipart { form in
        form.append("北京", name: "city")                        // text fields, any Unicode
        // file name and MIME type from the file
        form.append(fileAt: photo, name: "photo")
        form.append(Data("{}".utf8), name: "meta", fileName: "meta.json")
    })
    let reply = try await api.send(upload.onUploadProgress { progress in
        print(progress.completedBytes, "of", progress.expectedBytes ?? 0)
    })
    print(reply.json)
    // a file as the whole body
    _ = try await api.send(Request<JSON>("videos/42", method: .put, body: .file(photo)))
}

func readmeDownload(api: Client, folder: URL) async throws {
    let options = DownloadOptions(replacesExistingFile: true, isResumable: true, computesChecksum: true)
    let radar = Request.download("radar", to: folder.appendingPathComponent("radar.png"),
        options: options)
    do {
        let file = try await api.send(radar).value
        print(file.url.path, file.size, "bytes, resumed from", file.resumedFrom)
        print("sha256", file.sha256 ?? "")
    } catch {
        print("interrupted: run it again and it continues from the bytes on disk (\(error))")
    }
}

func readmeStreams(api: Client) async throws {
    for try await event in api.stream(Request<Data>("updates")).events {   // server-sent events
        print(event.event, event.data, event.id ?? "")
    }
    for try await line in api.stream(Request<Data>("completions")).lines {  // line-delimited JSON
        print(try JSON(data: Data(line.utf8)))
    }
    let handle = api.events(Request<Data>("updates"), onEvent: { event in print(event.data) },
                            completion: { result in print("stream ended:", result) })
    handle.cancel()
}

final class UploadScreen: TransferDelegate {
    func request(_ request: RequestHandle, didUpdate progress: TransferProgress) { print(progress.fractionCompleted ?? 0) }
    func request(_ request: RequestHandle, didSucceedWith response: Response<any Sendable>) {}
    func request(_ request: RequestHandle, didFailWith error: TernError) {}
    func request(_ request: RequestHandle, didHitCacheWith response: Response<any Sendable>) {}
}

func readmeProgressStyles(api: Client, video: URL, screen: UploadScreen) async throws {
    let upload = Request<JSON>("videos", method: .post, body: .file(video))
    // 1. a closure
    api.send(upload.onUploadProgress { progress in print(progress.completedBytes) }) { _ in }
    // 2. a TransferDelegate
    api.send(upload, delegate: screen)
    // 3. an async sequence
    let transfer = api.transfer(upload)
    for await progress in transfer.progress { print(progress.fractionCompleted ?? 0) }
    print(try await transfer.response.json)
}

func readmeTransports() -> [Client] {
    let onLibcurl = Client(baseURL: "https://api.example.com")   // Linux: CurlTransport
    let onURLSession = Client(baseURL: "https://api.example.com") { configuration in
        configuration.transport = URLSessionTransport.make(configuration: configuration)
    }
    return [onLibcurl, onURLSession]
}

#if os(Linux)
func readmeCrawl(_ api: Client, pages: [String]) async throws -> [JSON] {
    guard let loop = api.taskExecutor else { return [] }  // nil unless the transport is libcurl
    return try await withTaskExecutorPreference(loop) {
        var results: [JSON] = []
        // no thread hop
        for page in pages { results.append(try await api.send(Request<JSON>(page)).json) }
        return results
    }
}
#endif

func readmeTourLifecycle(api: Client, screen: AnyObject, text: String) {
    let search = Request<[City]>("search", query: ["q": text])
        .repeating(.cancelOlder, key: "search")           // a newer search cancels the older one
        .owned(by: screen)                                 // cancelled when the screen is released
        .tagged("search")
    api.send(search) { result in print(result) }
    api.cancel(tag: "search")                              // or cancel(url:), cancelAll()
}

func readmeTourServer(incomingTrace: TraceContext?) async throws {
    let service = Client(baseURL: "http://inventory.internal:8080") {
        $0.tracer = TraceContextTracer { span in print(span) }   // traceparent on every attempt
    }
    let stock = try await TraceContext.$current.withValue(incomingTrace) {
        try await service.send(Request<JSON>("stock/42"))
    }
    let scrape = service.metrics.prometheusText()                // in flight, outcomes, latency …
    let quiet = Client(baseURL: "http://cache.internal") { $0.collectsMetrics = false }  // no tally at all
    _ = (stock, scrape, quiet)
}

func readmeTourCache() {
    let api = Client(baseURL: "https://api.example.com") { $0.cachePolicy = .http }  // as the server says
    let forecast = Request<JSON>("forecast", query: ["city": "101010100"])
        .caching(CachePolicy(read: .cacheThenNetwork, write: .both, maxAge: 600))     // as the app says
    api.send(forecast, cached: { hit in show(hit.json) }, completion: { result in
        if case .success(let fresh) = result { show(fresh.json) }
    })
}

func readmeTourTransfers(api: Client, folder: URL) async throws {
    let radar = Request.download("radar", to: folder.appendingPathComponent("radar.png"),
                                 options: DownloadOptions(isResumable: true))   // run it again: it resumes
    let file = try await api.send(radar.onDownloadProgress { print($0.fractionCompleted ?? 0) }).value
    for try await event in api.stream(Request<Data>("updates")).events { print(event.data) }
    _ = file
}

@Suite struct ReadmeExamplesTests {
    @Test func everyReadmeSampleIsCompiledHere() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let normalizedSource = Self.normalize(source)
        let blocks = readme.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
        #expect(blocks.count >= 4)
        // Fragments of a user's Package.swift cannot compile here; their products must be ours.
        let (manifests, samples) = (blocks.filter { $0.hasPrefix("// Package.swift\n") }, blocks.filter { !$0.hasPrefix("// Package.swift\n") })
        for block in samples {
            #expect(normalizedSource.contains(Self.normalize(block)), "README sample not compiled here:\n\(block)")
        }
        #expect(!manifests.isEmpty, "the README shows no Package.swift lines to install Tern")
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        for block in manifests {
            for product in block.components(separatedBy: ".product(name: \"").dropFirst().map({ $0.prefix { $0 != "\"" } }) {
                #expect(manifest.contains(".library(name: \"\(product)\""), "the README installs \(product), which Package.swift does not offer")
            }
        }
    }

    static func normalize(_ text: String) -> String {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }.joined(separator: "\n")
    }

    @Test func theCacheSampleRuns() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-cache-\(UUID().uuidString)")
        try await readmeCache(png: Data([1, 2, 3]), url: "https://example.com/a.png", body: Data("[]".utf8),
                              headers: Data("{}".utf8), forecast: Forecast(highs: [3, 5]), cachesDirectory: directory)
    }

    @Test func theThreeStylesRunAgainstHTTPBin() async throws {
        let client = Client(baseURL: try TestServers.httpbin())
        let response = try await client.get("get", parameters: ["q": "北京", "lang": "zh"])
        #expect(response.json["args"]?["q"]?.string == "北京")
        readmeErrors(.success(response))
    }
}

func readmeWebSocket(api: Client) async throws {
    let socket = api.webSocket(Request<Data>("live/temperatures"))
    try await socket.send("subscribe")
    for try await message in socket.messages { print(message) }
}

func readmeOutbox(api: Client) async throws {
    let outbox = try Outbox(client: api)
    let id = try outbox.enqueue(Request<JSON>("favourites", method: .post, body: .json(["city": "成都"])))
    for await event in outbox.events where event.item?.id == id { print(event) }
}
