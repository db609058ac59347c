import Foundation

/// Names and plain sentences for status codes and `URLError` codes.
extension TernError {
    /// What a user is told of a transport error with `code`.
    static func userMessage(for code: URLError.Code) -> String {
        switch code {
        case .notConnectedToInternet, .dataNotAllowed, .internationalRoamingOff: "You appear to be offline."
        case .networkConnectionLost: "The network connection was lost."
        case .timedOut: "The server did not respond in time."
        case .cannotFindHost, .dnsLookupFailed, .cannotConnectToHost: "The server could not be reached."
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid, .clientCertificateRejected,
            .clientCertificateRequired:
            "A secure connection to the server could not be made."
        case .cancelled: "The request was cancelled."
        default: "A network error occurred."
        }
    }

    /// What a user is told of an unacceptable status `code`.
    static func userMessage(forStatus code: Int) -> String {
        switch code {
        case 401: "You need to sign in."
        case 403: "You do not have permission to do that."
        case 404, 410: "The requested item could not be found."
        case 408, 429, 503: "The server is busy. Try again later."
        case 500...599: "The server had a problem (\(code))."
        default: "The server refused the request (\(code))."
        }
    }

    /// The reason phrase of a status code (RFC 9110 and common extensions), nil for other codes.
    static func reasonPhrase(_ code: Int) -> String? {
        reasonPhrases[code]
    }

    private static let reasonPhrases: [Int: String] = [
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
        305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect",
        400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
        405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required", 408: "Request Timeout",
        409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed", 413: "Content Too Large",
        414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable", 417: "Expectation Failed",
        421: "Misdirected Request", 422: "Unprocessable Content", 425: "Too Early", 426: "Upgrade Required",
        428: "Precondition Required", 429: "Too Many Requests", 431: "Request Header Fields Too Large",
        451: "Unavailable For Legal Reasons",
        500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
        504: "Gateway Timeout", 505: "HTTP Version Not Supported", 507: "Insufficient Storage",
        511: "Network Authentication Required",
    ]

    /// The name of a `URLError` code as Foundation spells it (`cannotConnectToHost` for -1004).
    static func name(of code: URLError.Code) -> String {
        urlErrorNames[code.rawValue] ?? "code \(code.rawValue)"
    }

    private static let urlErrorNames: [Int: String] = [
        -1: "unknown", -999: "cancelled", -1000: "badURL", -1001: "timedOut", -1002: "unsupportedURL",
        -1003: "cannotFindHost", -1004: "cannotConnectToHost", -1005: "networkConnectionLost", -1006: "dnsLookupFailed",
        -1007: "httpTooManyRedirects", -1008: "resourceUnavailable", -1009: "notConnectedToInternet",
        -1010: "redirectToNonExistentLocation", -1011: "badServerResponse", -1012: "userCancelledAuthentication",
        -1013: "userAuthenticationRequired", -1014: "zeroByteResource", -1015: "cannotDecodeRawData",
        -1016: "cannotDecodeContentData", -1017: "cannotParseResponse", -1018: "internationalRoamingOff",
        -1019: "callIsActive", -1020: "dataNotAllowed", -1021: "requestBodyStreamExhausted",
        -1022: "appTransportSecurityRequiresSecureConnection", -1100: "fileDoesNotExist", -1101: "fileIsDirectory",
        -1102: "noPermissionsToReadFile", -1103: "dataLengthExceedsMaximum", -1200: "secureConnectionFailed",
        -1201: "serverCertificateHasBadDate", -1202: "serverCertificateUntrusted", -1203: "serverCertificateHasUnknownRoot",
        -1204: "serverCertificateNotYetValid", -1205: "clientCertificateRejected", -1206: "clientCertificateRequired",
        -2000: "cannotLoadFromNetwork", -3000: "cannotCreateFile", -3001: "cannotOpenFile", -3002: "cannotCloseFile",
        -3003: "cannotWriteToFile", -3004: "cannotRemoveFile", -3005: "cannotMoveFile",
        -3006: "downloadDecodingFailedMidStream", -3007: "downloadDecodingFailedToComplete",
    ]
}

/// The method and URL of a request, as a failure names them: `GET https://api.example.com/v1/cities`
/// (the URL redacted by `Redaction.shared`, as every description is).
/// Thread safety: a value type, safe to share.
public struct RequestLine: Sendable, Equatable, CustomStringConvertible {
    /// The request's method, `GET` say.
    public var method: String
    /// The URL that answered (the last one, after redirects); nil when unknown.
    public var url: URL?

    /// Creates a request line.
    public init(method: String, url: URL?) {
        self.method = method
        self.url = url
    }

    /// A request line that says nothing: the default for errors made by hand.
    public static let unknown = RequestLine(method: "", url: nil)

    /// `METHOD URL`, the URL redacted.
    public var description: String {
        "\(method) \(url.map { Redaction.shared.url($0) } ?? "(no URL)")"
    }
}
