import Foundation
import Testing

@testable import Tern

/// One rule resolves every option: the request's own value, else its API group's, else its
/// client's; options a group does not set go from the request to the client.
@Suite struct CallOptionsTests {
    static let client = Client(baseURL: "http://127.0.0.1:9") {
        $0.timeout = 10
        $0.deadline = 120
        $0.retryPolicy = RetryPolicy(maxAttempts: 2)
        $0.validation = ResponseValidation(acceptableStatusCodes: [200])
        $0.maximumResponseSize = 1000
        $0.repeatStrategy = .cancelOlder
        $0.reportsCancellation = false
    }
    static let group = APIGroup("v2") {
        $0.timeout = 20
        $0.deadline = 90
        $0.retryPolicy = RetryPolicy(maxAttempts: 3)
        $0.tags = ["group"]
    }

    @Test func theClientDecidesWhereNothingElseDoes() {
        let options = CallOptions(Request<Data>("x"), client: Self.client)
        #expect(options.timeout == 10 && options.deadline == 120 && options.retryPolicy.maxAttempts == 2)
        #expect(CallOptions(Request<Data>("x"), client: Client(baseURL: "http://127.0.0.1:9")).deadline == .infinity)
        #expect(options.validation.acceptableStatusCodes == [200] && options.sizeLimit == 1000)
        #expect(options.repeatStrategy == .cancelOlder && !options.reportsCancellation && options.tags.isEmpty)
    }

    @Test func theGroupComesBeforeTheClient() {
        var request = Request<Data>("x")
        request.group = Self.group
        request.tags = ["own"]
        let options = CallOptions(request, client: Self.client)
        #expect(options.timeout == 20 && options.retryPolicy.maxAttempts == 3)
        #expect(options.deadline == 90)  // the group's, over the client's
        #expect(options.validation.acceptableStatusCodes == [200])  // the group sets none
        #expect(options.tags == ["own", "group"])
    }

    @Test func theRequestComesFirst() {
        var request = Request<Data>("x", timeout: 30)
        request.group = Self.group
        request.retryPolicy = RetryPolicy(maxAttempts: 4)
        request.maximumResponseSize = Int.max  // lifts the client's limit
        request.repeatStrategy = .allow
        request.deadline = .infinity  // lifts the group's and the client's
        request.reportsCancellation = true
        let options = CallOptions(request, client: Self.client)
        #expect(options.timeout == 30 && options.deadline == .infinity && options.retryPolicy.maxAttempts == 4)
        #expect(options.sizeLimit == nil && options.repeatStrategy == .allow && options.reportsCancellation)
        #expect(CallOptions(Request<Data>("x"), client: Self.client, alwaysReportsCancellation: true).reportsCancellation)
    }
}
