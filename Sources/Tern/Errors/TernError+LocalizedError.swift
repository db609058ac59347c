import Foundation

/// `localizedDescription` (what an alert or SwiftUI's `.alert(isPresented:error:)` shows) is a
/// short sentence a user may read: it never holds a server's body, a URL or a decoder's debug
/// text. The details a developer needs are in `failureReason`, `description` and
/// `debugDescription` (the same redacted line), for logs. `recoverySuggestion` says what the user
/// or the app can do, where something helps.
extension TernError: LocalizedError {
    /// A short sentence for users: what went wrong, without the server's text or the URL.
    public var errorDescription: String? {
        switch self {
        case .invalidRequest, .unsupportedConfiguration: "The request could not be made."
        case .transport(let error): Self.userMessage(for: error.code)
        case .timedOut: "The server did not respond in time."
        case .deadlineExceeded: "The request took too long."
        case .unacceptableStatus(let code, _, _, _): Self.userMessage(forStatus: code)
        case .unacceptableContentType, .decoding: "The server's response could not be read."
        case .cancelled(.superseded): "A newer request for the same content replaced this one."
        case .cancelled(.duplicate): "The same request is already in progress."
        case .cancelled: "The request was cancelled."
        case .clientInvalidated: "The request could not be sent."
        case .cacheMiss: "This content is not available offline."
        case .redirectFailed: "The server sent the request somewhere it cannot go."
        case .rejected(_, let error): (error as? LocalizedError)?.errorDescription ?? "The request could not be completed."
        case .responseTooLarge: "The server's response is too large."
        case .business(let code, let message, _): message.isEmpty ? "The server refused the request (code \(code))." : message
        case .failedAfterRetries(_, let last): last.errorDescription
        case .pinningFailed: "The server's identity could not be verified."
        case .webSocketFailed: "The live connection to the server was lost."
        case .webSocketHandshakeFailed: "The live connection to the server could not be opened."
        case .requestBodyFailed: "The data could not be sent."
        }
    }

    /// The one-line technical description, redacted (the same as `description`): the status and
    /// the request line, the start of the body, the transport's error, for logs.
    public var failureReason: String? { description }

    /// What to do about it, where something helps; nil otherwise.
    public var recoverySuggestion: String? {
        switch self {
        case .failedAfterRetries(_, let last):
            return last.recoverySuggestion
        case .transport(let error):
            switch error.code {
            case .notConnectedToInternet, .networkConnectionLost, .dataNotAllowed, .internationalRoamingOff:
                return "Check the network connection and try again."
            case .cannotFindHost, .dnsLookupFailed, .cannotConnectToHost:
                return "Check the server's address, or try again later."
            case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
                .serverCertificateHasUnknownRoot, .serverCertificateNotYetValid:
                return "The secure connection could not be established; check the device's date and the network."
            default:
                return nil
            }
        case .timedOut:
            return "The server did not answer in time; try again."
        case .deadlineExceeded:
            return "The request took longer than allowed; try again, or allow it more time."
        case .unacceptableStatus(let code, _, _, _):
            switch code {
            case 401: return "Sign in again."
            case 403: return "This account may not do that."
            case 408, 429, 503: return "The server is busy; try again later."
            case 500...599: return "The server had a problem; try again later."
            default: return nil
            }
        case .responseTooLarge:
            return "Raise the request's maximumResponseSize, or download the body to a file."
        case .clientInvalidated:
            return "Create a new client."
        case .pinningFailed:
            return "The connection may be intercepted; do not send anything on this network."
        case .webSocketFailed:
            return "Check the network connection and try again."
        case .invalidRequest, .unacceptableContentType, .decoding, .cancelled, .cacheMiss, .redirectFailed, .rejected, .business,
            .unsupportedConfiguration, .requestBodyFailed, .webSocketHandshakeFailed:
            return nil
        }
    }
}
