import Foundation
import Testing

@testable import Tern

/// `Client.shared` can be configured until its first use, and not after.
@Suite struct SharedClientTests {
    @Test func aSetupTakesChangesUntilItsClientExists() {
        let setup = SharedClientSetup()
        #expect(setup.configure { $0.timeout = 12 })
        #expect(setup.configure { $0.headers["X-App"] = "weather" })  // changes add up
        let client = setup.makeClient()
        #expect(client.configuration.timeout == 12 && client.configuration.headers["X-App"] == "weather")
        #expect(client.configuration.oneLineGetStrategy == .cancelOlder)  // the shared client's own default
        #expect(!setup.configure { $0.timeout = 99 })
        #expect(client.configuration.timeout == 12)
    }

    @Test func concurrentChangesAreAllKept() async {
        let setup = SharedClientSetup()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask { _ = setup.configure { $0.headers["X-\(index)"] = "\(index)" } }
            }
        }
        #expect(setup.makeClient().configuration.headers.count == 50)
    }

    @Test func theSharedClientCannotBeChangedOnceUsed() {
        _ = Client.shared
        #expect(!Client.configureShared { $0.timeout = 1 })
        #expect(Client.shared.configuration.timeout != 1)
    }
}
