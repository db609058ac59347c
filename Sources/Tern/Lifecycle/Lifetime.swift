import Foundation

/// How long a request lives relative to the objects around it (YBNetwork's release strategy).
///
/// - `.untilFinished` (default): the request runs to its end whatever happens to its handle or to
///   the object that started it; its callback always comes.
/// - `.owner(object)`: the request is cancelled (`TernError.cancelled(.ownerReleased)`) when
///   `object` — typically the screen that started it — is deallocated. The owner is held weakly.
///   Tern notices within about 0.1 s, and never delivers a result once the owner is gone.
/// - `.handleReleased`: the request is cancelled, silently, when the last reference to its
///   `RequestHandle` goes away: keep the handle in a property and the request lives as long.
/// - `.detached`: the request runs to completion, unaffected by the handle's release, but its
///   result is delivered only if its handle is still alive then (a delegate only if it is too).
/// Thread safety: a value type, safe to share; holds the owner weakly.
public struct Lifetime: Sendable {
    enum Kind: Sendable, Equatable {
        case untilFinished, owner, handleReleased, detached
    }

    let kind: Kind
    let owner: Weak<AnyObject>?

    /// The request lives until it finishes. The default.
    public static let untilFinished = Lifetime(kind: .untilFinished, owner: nil)
    /// The request is cancelled when its handle is released.
    public static let handleReleased = Lifetime(kind: .handleReleased, owner: nil)
    /// The request runs to completion; its result is delivered only while its handle is alive.
    public static let detached = Lifetime(kind: .detached, owner: nil)

    /// The request is cancelled when `object` is deallocated; `object` is held weakly.
    public static func owner(_ object: AnyObject) -> Lifetime {
        Lifetime(kind: .owner, owner: Weak(object))
    }

    /// Whether the owner of an `.owner` lifetime has been deallocated.
    var ownerIsGone: Bool { kind == .owner && owner?.object == nil }
}
