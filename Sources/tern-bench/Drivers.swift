import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Tern

/// What one GET came back with, for verification.
struct Outcome: Sendable {
    let status: Int
    let length: Int
    static let failed = Outcome(status: -1, length: -1)
}

/// One way of sending a GET: through Tern, or through raw URLSession.
protocol Driver: Sendable {
    var name: String { get }
    func get(_ url: String) async -> Outcome
    /// A GET of the bench's 1 KB JSON document decoded into `Feed`, the `Decodable` path:
    /// `length` is the number of items decoded.
    func getDecoded(_ url: String) async -> Outcome
    #if os(Linux)
    /// The loop executor of the driver's transport, where it has one (libcurl, Linux only).
    var taskExecutor: (any TaskExecutor)? { get }
    #endif
}

#if os(Linux)
extension Driver {
    var taskExecutor: (any TaskExecutor)? { nil }
}
#endif

/// Tern's async API with a raw `Data` response: the path an app's request takes.
struct TernDriver: Driver {
    var name = "tern"
    let client: Client

    #if os(Linux)
    var taskExecutor: (any TaskExecutor)? { client.taskExecutor }
    #endif

    func get(_ url: String) async -> Outcome {
        do {
            let response = try await client.send(Request<Data>(url))
            return Outcome(status: response.statusCode, length: response.data.count)
        } catch {
            return .failed
        }
    }

    func getDecoded(_ url: String) async -> Outcome {
        do {
            let response = try await client.send(Request<Feed>(url))
            return Outcome(status: response.statusCode, length: response.value.items.count)
        } catch {
            return .failed
        }
    }
}

/// URLSession's own async API: what a user without a networking layer writes.
struct SessionDriver: Driver {
    let name = "urlsession"
    let session: URLSession

    func get(_ url: String) async -> Outcome { await get(url, decodes: false) }

    func getDecoded(_ url: String) async -> Outcome { await get(url, decodes: true) }

    private func get(_ url: String, decodes: Bool) async -> Outcome {
        guard let url = URL(string: url) else { return .failed }
        // Before macOS 12 (where tern-bench also builds) there is no async API: the closure one.
        guard #available(macOS 12, iOS 15, tvOS 15, watchOS 8, *) else {
            let closure = ClosureSessionDriver(session: session)
            return await decodes ? closure.getDecoded(url.absoluteString) : closure.get(url.absoluteString)
        }
        do {
            let (data, response) = try await session.data(for: URLRequest(url: url))  // available: checked above
            return Outcome(status: (response as? HTTPURLResponse)?.statusCode ?? -1, body: data, decodes: decodes)
        } catch {
            return .failed
        }
    }
}

/// URLSession's completion-handler API bridged to async: the classic way (an AFNetworking-style `dataTask`).
struct ClosureSessionDriver: Driver {
    let name = "urlsession-closure"
    let session: URLSession

    func get(_ url: String) async -> Outcome { await get(url, decodes: false) }

    func getDecoded(_ url: String) async -> Outcome { await get(url, decodes: true) }

    private func get(_ url: String, decodes: Bool) async -> Outcome {
        guard let url = URL(string: url) else { return .failed }
        return await withCheckedContinuation { continuation in
            session.dataTask(with: URLRequest(url: url)) { data, response, error in
                guard error == nil, let http = response as? HTTPURLResponse else { return continuation.resume(returning: .failed) }
                continuation.resume(returning: Outcome(status: http.statusCode, body: data, decodes: decodes))
            }.resume()
        }
    }
}

extension Outcome {
    /// What a raw URLSession driver got: the body's length, or with `decodes`, how many items it
    /// decoded into `Feed` with `JSONDecoder` (`.failed` when it does not decode).
    init(status: Int, body: Data?, decodes: Bool) {
        guard decodes else {
            self.init(status: status, length: body?.count ?? 0)
            return
        }
        guard let body, let feed = try? Feed.decoder.decode(Feed.self, from: body) else {
            self = .failed
            return
        }
        self.init(status: status, length: feed.items.count)
    }
}

/// The bench's 1 KB JSON document (`1k.json`: a code, 16 items, padding), as an app declares it.
struct Feed: Decodable, Sendable {
    struct Item: Decodable, Sendable {
        let id: Int
        let name: String
        let t: Int
    }

    let code: Int
    let items: [Item]
    let pad: String

    /// The one `JSONDecoder` the URLSession drivers share, as an app would.
    static let decoder = JSONDecoder()
}

/// The pairs the benchmark compares.
enum Drivers {
    /// Tern on URLSession and URLSession on the very same `URLSessionConfiguration` (Tern's:
    /// `urlCache = nil`, same headers, same connection limit): what Tern's own code costs.
    static func sameConfiguration() -> (tern: any Driver, baseline: any Driver) {
        let configuration = onURLSession()
        let tern = TernDriver(client: Client(configuration: configuration))
        let baseline = SessionDriver(session: URLSession(configuration: configuration.makeSessionConfiguration()))
        return (tern, baseline)
    }

    /// Tern on URLSession against URLSession's completion-handler API, same configuration.
    static func closureBaseline() -> (tern: any Driver, baseline: any Driver) {
        let configuration = onURLSession()
        return (
            TernDriver(client: Client(configuration: configuration)),
            ClosureSessionDriver(session: URLSession(configuration: configuration.makeSessionConfiguration()))
        )
    }

    /// Tern on its libcurl transport against URLSession's async API, same wire headers and
    /// connection limit; nil where libcurl cannot be used.
    static func curl(connectionsPerHost: Int = 6) -> (tern: any Driver, baseline: any Driver)? {
        #if os(Linux)
        var configuration = ClientConfiguration()
        configuration.transportSettings.maximumConnectionsPerHost = connectionsPerHost
        guard let transport = CurlTransport.make(configuration: configuration) else { return nil }
        var onCurl = configuration
        onCurl.transport = transport
        return (
            TernDriver(name: "tern", client: Client(configuration: onCurl)),
            SessionDriver(session: URLSession(configuration: configuration.makeSessionConfiguration()))
        )
        #else
        return nil
        #endif
    }

    /// A client configuration on the URLSession transport, whatever the platform's default.
    static func onURLSession(_ adjust: (inout ClientConfiguration) -> Void = { _ in }) -> ClientConfiguration {
        var configuration = ClientConfiguration()
        adjust(&configuration)
        configuration.transport = URLSessionTransport.make(configuration: configuration)
        return configuration
    }

    /// Each with its defaults: what a user switching to Tern sees (on Linux, Tern's default is
    /// the libcurl transport).
    static func defaults() -> (tern: any Driver, baseline: any Driver) {
        (TernDriver(client: Client()), SessionDriver(session: URLSession(configuration: .default)))
    }
}
