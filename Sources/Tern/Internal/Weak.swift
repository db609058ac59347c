/// A weak reference that can cross threads: to a delegate, an owner, a handle. `Object` is a
/// class or a class-bound protocol (`any RequestDelegate`); the reference is dropped, never
/// kept alive, and `object` reads nil once it is gone.
// Sendable: `reference` is a weak reference, whose loads and stores the runtime makes atomic;
// holders set it once before sharing the box, or under their own lock. What `Object` may be called
// from is the holder's rule (delegates are called on the request's callback queue).
final class Weak<Object>: @unchecked Sendable {
    private weak var reference: AnyObject?

    init(_ object: Object? = nil) {
        reference = object.map { $0 as AnyObject }
    }

    /// The object, while something else keeps it alive.
    var object: Object? {
        get { reference.map { $0 as! Object } }
        set { reference = newValue.map { $0 as AnyObject } }
    }
}
