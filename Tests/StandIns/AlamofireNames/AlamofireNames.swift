import Foundation

// A stand-in for Alamofire 5 in the coexistence tests: a module that declares the public names
// Alamofire shares with Tern, each of the same kind (class, struct, protocol, type alias), so that
// a file importing both meets the same ambiguities an app migrating from Alamofire meets. None of
// them does anything.

/// Alamofire's `HTTPMethod` is a struct.
public struct HTTPMethod: RawRepresentable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
}

/// Alamofire's `RetryPolicy` is an open class.
open class RetryPolicy {
    public init() {}
}

/// Alamofire's `Parameters`.
public typealias Parameters = [String: Any]

/// Alamofire's `Request` is a class.
open class Request {
    public init() {}
}

/// Alamofire's `Empty`.
public struct Empty: Sendable {
    public init() {}
}

/// Alamofire's `MultipartFormData` is an open class.
open class MultipartFormData {
    public init() {}
}

/// Alamofire's protocols of the same names as Tern's.
public protocol EventMonitor {}
public protocol Authenticator {}
public protocol RequestAdapter {}
public protocol ParameterEncoding {}
public protocol ResponseSerializer {}
public protocol RequestDelegate: AnyObject {}
