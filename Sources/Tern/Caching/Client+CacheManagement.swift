import Foundation

extension Client {
    /// Removes every cached response of this client (memory and disk).
    public func clearCache() {
        responseCache.removeAll()
    }

    /// Removes every cached response of this client from memory only: the disk level keeps its
    /// entries (an app under memory pressure, say).
    public func clearMemoryCache() {
        responseCache.removeAllFromMemory()
    }

    /// Removes every cached response of this client from disk only: what is in memory stays until
    /// evicted (a user signing out clears both with `clearCache()`).
    public func clearDiskCache() {
        responseCache.removeAllFromDisk()
    }

    /// Removes the cached response `request` would read (its key under its cache policy, or the
    /// client's).
    public func removeCachedResponse<Value>(for request: some RequestConvertible<Value>) {
        let request = request.makeRequest()
        var policy = cachePolicy(for: request)
        if !policy.isActive { policy = CachePolicy(write: .both) }
        guard let urlRequest = try? RequestBuilder.makeURLRequest(request, client: self),
            let plan = cachePlan(for: request, urlRequest, policy: policy)
        else { return }
        if let entry = plan.entryInAnyLevel() { responseCache.remove(plan.storageKey(of: entry)) }
        responseCache.remove(plan.key)
    }

    /// Removes every cached response for `url` (absolute, or relative to the base URL), whatever
    /// its query, method, body or key headers.
    /// - Returns: How many entries were removed.
    @discardableResult
    public func removeCachedResponses(url: String) -> Int {
        guard let urlRequest = try? RequestBuilder.makeURLRequest(Request<Data>(url), client: self),
            let absolute = urlRequest.url, let prefix = CacheKey.prefix(for: absolute)
        else { return 0 }
        return responseCache.remove(prefix: prefix)
    }

    /// Bytes of cached responses (the disk cache's size, or the memory cache's when there is no
    /// disk cache).
    public var cacheSize: Int64 {
        responseCache.totalSize()
    }
}
