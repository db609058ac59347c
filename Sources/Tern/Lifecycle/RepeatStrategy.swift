import Foundation

/// What happens when a request is sent while an identical one — same method, same URL with its
/// query sorted, same body — is still in flight on the same client.
///
/// - `.allow`: every request runs. The default.
/// - `.cancelOlder`: the older request(s) end with `TernError.cancelled(.superseded)` and the
///   newest runs: search-as-you-type, where a stale result must never reach the screen.
/// - `.ignoreNewer`: the new request ends at once with `TernError.cancelled(.duplicate)` and the
///   one in flight carries on: a refresh button tapped five times.
/// - `.share`: one network call serves every identical caller (coalescing); each gets the same
///   response in its own callback style, decoded with its own serializer. Cancelling one caller
///   detaches only that caller; the network call is cancelled when every caller has cancelled.
///   Shared calls report no progress.
///
/// With closures and delegates each caller gets its own single terminal call in every strategy
/// (silent when cancellation is silent); `async` callers always get a value or a thrown error.
/// Thread safety: a value type, safe to share.
public enum RepeatStrategy: Sendable, Equatable {
    /// Every request runs.
    case allow
    /// The newest request wins; older identical ones are cancelled.
    case cancelOlder
    /// The request in flight wins; a newer identical one is not sent.
    case ignoreNewer
    /// Identical requests share one network call.
    case share
}
