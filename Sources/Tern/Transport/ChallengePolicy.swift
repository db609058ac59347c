import Foundation

/// How Tern answers an authentication challenge, per platform: a pure decision, so that every
/// case is tested on Linux, and the one file where the two platforms' auth behaviour differs.
///
/// | challenge | Apple platforms | Linux |
/// |---|---|---|
/// | TLS server trust | system default | (never sent) |
/// | client certificate | system default: go on without one | (never sent) |
/// | Basic, first try, credential set | the credential | the credential |
/// | Basic, no credential or it failed | system default: the 401 arrives as a response | cancel, deliver the 401 |
/// | Negotiate, NTLM, Digest, other, credential set | reject the space: the server's next scheme is offered | cancel, deliver the 401 |
/// | Negotiate, NTLM, Digest, other, no credential | system default | cancel, deliver the 401 |
/// | any proxy challenge | system default (never the server's credential) | cancel, deliver the 407 |
///
/// Linux hangs on an unanswered 401 Basic and only ever sends Basic challenges, so it cancels
/// what Tern does not answer and rebuilds the 401 from the task's response; on Apple platforms a
/// cancel would cancel the whole request, so Tern lets the system handle what it does not speak.
enum ChallengePolicy {
    /// The platforms whose URL loading systems differ here.
    enum Platform: Equatable {
        case apple, linux

        /// The platform this build runs on.
        static var current: Platform {
            #if canImport(Darwin)
            .apple
            #else
            .linux
            #endif
        }
    }

    /// The scheme a challenge asks for.
    enum Method: Equatable {
        case serverTrust, clientCertificate, basic, digest, negotiate, ntlm, other(String)

        /// The method named by a protection space's `authenticationMethod`. Raw values: Linux
        /// lacks some of the constants (its Foundation marks client certificates unavailable).
        init(_ name: String) {
            switch name {
            case "NSURLAuthenticationMethodServerTrust": self = .serverTrust
            case "NSURLAuthenticationMethodClientCertificate": self = .clientCertificate
            case NSURLAuthenticationMethodHTTPBasic, NSURLAuthenticationMethodDefault: self = .basic
            case NSURLAuthenticationMethodHTTPDigest: self = .digest
            case NSURLAuthenticationMethodNegotiate: self = .negotiate
            case NSURLAuthenticationMethodNTLM: self = .ntlm
            default: self = .other(name)
            }
        }
    }

    /// What a challenge is about.
    struct Challenge: Equatable {
        var method: Method
        var isProxy: Bool
        var previousFailures: Int
        var hasCredential: Bool
    }

    /// Tern's answer.
    enum Answer: Equatable {
        /// Answer with the client's Basic credential.
        case useCredential
        /// Let the system decide (Apple platforms only).
        case performDefaultHandling
        /// Decline this scheme so that the server's next one is offered (Apple platforms only).
        case rejectProtectionSpace
        /// Cancel the challenge and deliver the 401 (or 407) as a response (Linux).
        case cancelAndDeliverResponse
    }

    /// The answer to `challenge` on `platform`.
    static func answer(_ challenge: Challenge, on platform: Platform = .current) -> Answer {
        let unanswered: Answer = platform == .apple ? .performDefaultHandling : .cancelAndDeliverResponse
        if challenge.isProxy { return unanswered }
        switch challenge.method {
        case .serverTrust, .clientCertificate:
            return unanswered
        case .basic:
            return challenge.hasCredential && challenge.previousFailures == 0 ? .useCredential : unanswered
        case .digest, .negotiate, .ntlm, .other:
            if platform == .apple && challenge.hasCredential { return .rejectProtectionSpace }
            return unanswered
        }
    }
}

extension ChallengePolicy.Challenge {
    /// The facts of a URLSession challenge.
    init(_ challenge: URLAuthenticationChallenge, hasCredential: Bool) {
        self.init(
            method: ChallengePolicy.Method(challenge.protectionSpace.authenticationMethod),
            isProxy: challenge.protectionSpace.isProxy(), previousFailures: challenge.previousFailureCount,
            hasCredential: hasCredential)
    }
}
