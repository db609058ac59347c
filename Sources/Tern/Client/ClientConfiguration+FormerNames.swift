import Foundation
import TernCache

/// Settings under the names they had before they were grouped into `transportSettings` and
/// `cacheStorage`: they still compile, with a fix-it to the new name, until 1.0.
extension ClientConfiguration {
    /// The headers every request carries unless it sets its own (`TransportSettings.wireHeaders`).
    @available(*, deprecated, renamed: "transportSettings.wireHeaders")
    public var wireHeaders: [String: String] { transportSettings.wireHeaders }

    /// The Basic credential (`TransportSettings.credential`).
    @available(*, deprecated, renamed: "transportSettings.credential")
    public var credential: BasicCredential? {
        get { transportSettings.credential }
        set { transportSettings.credential = newValue }
    }

    /// Where cookies are kept (`TransportSettings.cookieStorage`).
    @available(*, deprecated, renamed: "transportSettings.cookieStorage")
    public var cookieStorage: HTTPCookieStorage? {
        get { transportSettings.cookieStorage }
        set { transportSettings.cookieStorage = newValue }
    }

    /// The `User-Agent` header (`TransportSettings.userAgent`).
    @available(*, deprecated, renamed: "transportSettings.userAgent")
    public var userAgent: String {
        get { transportSettings.userAgent }
        set { transportSettings.userAgent = newValue }
    }

    /// The `Accept-Language` header (`TransportSettings.acceptLanguage`).
    @available(*, deprecated, renamed: "transportSettings.acceptLanguage")
    public var acceptLanguage: String? {
        get { transportSettings.acceptLanguage }
        set { transportSettings.acceptLanguage = newValue }
    }

    /// TLS settings (`TransportSettings.tls`).
    @available(*, deprecated, renamed: "transportSettings.tls")
    public var tls: TLSConfiguration {
        get { transportSettings.tls }
        set { transportSettings.tls = newValue }
    }

    /// The proxy (`TransportSettings.proxy`).
    @available(*, deprecated, renamed: "transportSettings.proxy")
    public var proxy: ProxyConfiguration {
        get { transportSettings.proxy }
        set { transportSettings.proxy = newValue }
    }

    /// Connections per host (`TransportSettings.maximumConnectionsPerHost`).
    @available(*, deprecated, renamed: "transportSettings.maximumConnectionsPerHost")
    public var maximumConnectionsPerHost: Int {
        get { transportSettings.maximumConnectionsPerHost }
        set { transportSettings.maximumConnectionsPerHost = newValue }
    }

    /// URLSession's own options (`TransportSettings.urlSession`).
    @available(*, deprecated, renamed: "transportSettings.urlSession")
    public var urlSession: URLSessionTransport.Options {
        get { transportSettings.urlSession }
        set { transportSettings.urlSession = newValue }
    }

    /// Where the disk cache lives (`CacheStorageSettings.directory`).
    @available(*, deprecated, renamed: "cacheStorage.directory")
    public var cacheDirectory: URL? {
        get { cacheStorage.directory }
        set { cacheStorage.directory = newValue }
    }

    /// How the memory level is kept (`CacheStorageSettings.memory`).
    @available(*, deprecated, renamed: "cacheStorage.memory")
    public var memoryCache: MemoryCacheSettings {
        get { cacheStorage.memory }
        set { cacheStorage.memory = newValue }
    }

    /// Bytes kept in memory (`CacheStorageSettings.memoryLimit`).
    @available(*, deprecated, renamed: "cacheStorage.memoryLimit")
    public var memoryCacheLimit: Int {
        get { cacheStorage.memoryLimit }
        set { cacheStorage.memoryLimit = newValue }
    }

    /// How the disk level is kept (`CacheStorageSettings.disk`).
    @available(*, deprecated, renamed: "cacheStorage.disk")
    public var diskCache: DiskCache.Configuration {
        get { cacheStorage.disk }
        set { cacheStorage.disk = newValue }
    }

    /// Bytes kept on disk (`CacheStorageSettings.diskLimit`).
    @available(*, deprecated, renamed: "cacheStorage.diskLimit")
    public var diskCacheLimit: Int64 {
        get { cacheStorage.diskLimit }
        set { cacheStorage.diskLimit = newValue }
    }

    /// A disk cache of your own (`CacheStorageSettings.diskStore`).
    @available(*, deprecated, renamed: "cacheStorage.diskStore")
    public var diskCacheStore: DiskCache? {
        get { cacheStorage.diskStore }
        set { cacheStorage.diskStore = newValue }
    }
}
