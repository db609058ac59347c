import Foundation

/// An HTTP method: the common ones as static members, any other token by string literal.
/// Thread safety: a value type, safe to share.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The method token as sent on the wire, e.g. `"GET"`.
    public let rawValue: String

    /// Creates a method from its token; the token is upper-cased.
    public init(rawValue: String) { self.rawValue = rawValue.uppercased() }
    /// Creates a method from a string literal, e.g. `"PROPFIND"`.
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    /// `GET`
    public static let get: HTTPMethod = "GET"
    /// `POST`
    public static let post: HTTPMethod = "POST"
    /// `PUT`
    public static let put: HTTPMethod = "PUT"
    /// `PATCH`
    public static let patch: HTTPMethod = "PATCH"
    /// `DELETE`
    public static let delete: HTTPMethod = "DELETE"
    /// `HEAD`
    public static let head: HTTPMethod = "HEAD"
    /// `OPTIONS`
    public static let options: HTTPMethod = "OPTIONS"
    /// `TRACE`
    public static let trace: HTTPMethod = "TRACE"
    /// `CONNECT`
    public static let connect: HTTPMethod = "CONNECT"

    /// The token, e.g. `"GET"`.
    public var description: String { rawValue }

    /// Tern refuses a body on these methods: URLSession on Linux fails a GET with a body
    /// (error -1103) and servers differ on what a body on GET means.
    var allowsBody: Bool { self != .get && self != .head }
}
