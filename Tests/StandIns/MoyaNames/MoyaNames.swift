import Foundation

// A stand-in for Moya in the coexistence tests: the public names Moya shares with Tern, of the
// same kinds. None of them does anything.

/// Moya's `Endpoint` is an open class.
open class Endpoint {
    public init() {}
}

/// Moya's `Response` is a final class.
public final class Response {
    public init() {}
}
