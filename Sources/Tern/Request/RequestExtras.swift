import Foundation

/// The settings of a `Request` that most requests leave at their defaults, kept out of line.
///
/// A request is a value that async code holds across `await client.send(request)`, so its size is
/// paid in the awaiting task's frame for as long as the request is in flight. With these settings
/// in one shared box, a request is 160 bytes inline, a copy retains the box instead of each
/// setting, and a request that sets none of them allocates nothing for them.
struct RequestExtras: Sendable {
    var timeout: TimeInterval?
    var deadline: TimeInterval?
    var validation: ResponseValidation?
    var callbackQueue: CallbackQueue?
    var tags: Set<String> = []
    var repeatStrategy: RepeatStrategy?
    var repeatKey: String?
    var lifetime: Lifetime = .untilFinished
    var reportsCancellation: Bool?
    var progress: (@Sendable (TransferProgress) -> Void)?
    var maximumResponseSize: Int?
    var cachePolicy: CachePolicy?
    var retryPolicy: RetryPolicy?
    var redirectPolicy: RedirectPolicy?
    var identityHeaders: Set<String> = []
    var group: APIGroup?
    var storedHooks: Hooks?
    var download: DownloadTarget?
    var chunkHandler: (@Sendable (RequestHandle?, Data, HTTPURLResponse) -> TernError?)?
    var readsChunksOnArrival = false
    var progressObserver: (@Sendable (RequestHandle?, TransferProgress) -> Void)?
    var isPrebuilt = false
    var compression: RequestCompression?
    /// The connection this request opens when it is an upgrade (a WebSocket's).
    var upgrade: (any ConnectionUpgrade)?

    /// Every setting at its default: what a request without a box reads.
    static let defaults = RequestExtras()
}

/// One request's `RequestExtras`, shared by its copies until one of them changes a setting
/// (copy on write).
// Sendable: `values` is only mutated through `Request.editExtras`, which first makes the box
// unique to the request being mutated (`isKnownUniquelyReferenced`, else a copy); a box that
// more than one value can see is never written.
final class RequestExtrasBox: @unchecked Sendable {
    var values: RequestExtras

    init(_ values: RequestExtras) {
        self.values = values
    }
}

extension Request {
    /// Changes one of the out-of-line settings, copying them first when another request shares them.
    mutating func editExtras(_ change: (inout RequestExtras) -> Void) {
        if extras == nil {
            extras = RequestExtrasBox(RequestExtras())
        } else if !isKnownUniquelyReferenced(&extras) {
            extras = RequestExtrasBox(extras!.values)
        }
        change(&extras!.values)
    }
}
