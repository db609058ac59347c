/// A weak reference that can cross threads: to an owner, a handle, a delegate. The reference is
/// dropped, never kept alive, and `object` reads nil once it is gone. A delegate, whose type is a
/// protocol, is held as `Weak<AnyObject>` and cast back where it is called (`as? any P`).
// Sendable: `object` is a weak reference, whose loads and stores the runtime makes atomic;
// holders set it once before sharing the box, or under their own lock. What `Object` may be called
// from is the holder's rule (delegates are called on the request's callback queue).
final class Weak<Object: AnyObject>: @unchecked Sendable {
    /// The object, while something else keeps it alive.
    weak var object: Object?

    init(_ object: Object? = nil) {
        self.object = object
    }
}
