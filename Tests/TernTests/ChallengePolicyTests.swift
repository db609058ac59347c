import Foundation
import Testing
@testable import Tern

/// Every challenge case, on both platforms: the decision is pure, so Apple's column is checked
/// here on Linux too.
@Suite struct ChallengePolicyTests {
    typealias Policy = ChallengePolicy

    private func answer(
        _ method: Policy.Method, proxy: Bool = false, failures: Int = 0, credential: Bool,
        on platform: Policy.Platform
    ) -> Policy.Answer {
        Policy.answer(
            Policy.Challenge(method: method, isProxy: proxy, previousFailures: failures, hasCredential: credential),
            on: platform)
    }

    @Test func serverTrustAndClientCertificatesGetTheSystemDefaultOnApple() {
        #expect(answer(.serverTrust, credential: true, on: .apple) == .performDefaultHandling)
        #expect(answer(.clientCertificate, credential: true, on: .apple) == .performDefaultHandling)
        #expect(answer(.clientCertificate, credential: false, on: .apple) == .performDefaultHandling)
    }

    @Test func basicUsesTheCredentialOnceOnBothPlatforms() {
        for platform in [Policy.Platform.apple, .linux] {
            #expect(answer(.basic, credential: true, on: platform) == .useCredential)
        }
        #expect(answer(.basic, failures: 1, credential: true, on: .apple) == .performDefaultHandling)
        #expect(answer(.basic, failures: 1, credential: true, on: .linux) == .cancelAndDeliverResponse)
        #expect(answer(.basic, credential: false, on: .apple) == .performDefaultHandling)
        #expect(answer(.basic, credential: false, on: .linux) == .cancelAndDeliverResponse)
    }

    @Test(arguments: [Policy.Method.negotiate, .ntlm, .digest, .other("Bearer")])
    func schemesTernDoesNotSpeakAreRejectedWithACredentialSoTheNextIsOffered(method: Policy.Method) {
        #expect(answer(method, credential: true, on: .apple) == .rejectProtectionSpace)
        #expect(answer(method, credential: false, on: .apple) == .performDefaultHandling)
        #expect(answer(method, credential: true, on: .linux) == .cancelAndDeliverResponse)
    }

    @Test(arguments: [Policy.Method.basic, .negotiate, .digest])
    func aProxyNeverGetsTheServersCredential(method: Policy.Method) {
        #expect(answer(method, proxy: true, credential: true, on: .apple) == .performDefaultHandling)
        #expect(answer(method, proxy: true, credential: true, on: .linux) == .cancelAndDeliverResponse)
    }

    @Test func methodNamesMapToSchemes() {
        #expect(Policy.Method(NSURLAuthenticationMethodHTTPBasic) == .basic)
        #expect(Policy.Method(NSURLAuthenticationMethodDefault) == .basic)
        #expect(Policy.Method(NSURLAuthenticationMethodHTTPDigest) == .digest)
        #expect(Policy.Method(NSURLAuthenticationMethodNegotiate) == .negotiate)
        #expect(Policy.Method(NSURLAuthenticationMethodNTLM) == .ntlm)
        #expect(Policy.Method("NSURLAuthenticationMethodServerTrust") == .serverTrust)
        #expect(Policy.Method("NSURLAuthenticationMethodClientCertificate") == .clientCertificate)
        #expect(Policy.Method("X") == .other("X"))
    }

    @Test func theSessionKeepsNoSharedCredentialStore() {
        #expect(ClientConfiguration().makeSessionConfiguration().urlCredentialStorage == nil)
    }
}
