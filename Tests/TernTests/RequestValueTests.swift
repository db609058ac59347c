import Foundation
import Testing

@testable import Tern

/// A `Request` is a value: a copy changes alone, even though the settings most requests leave at
/// their defaults live in one box its copies share until one of them writes.
@Suite struct RequestValueTests {
    @Test func aCopyChangesAloneWhileItsOriginalKeepsItsSettings() {
        var original = Request<Data>("a", timeout: 5)
        original.tags = ["x"]
        original.retryPolicy = RetryPolicy(maxAttempts: 2)
        var copy = original
        copy.timeout = 9
        copy.tags.insert("y")
        copy.retryPolicy?.maxAttempts = 4
        copy.lifetime = .detached
        #expect(original.timeout == 5 && original.tags == ["x"] && original.retryPolicy?.maxAttempts == 2)
        #expect(original.lifetime.kind == .untilFinished)
        #expect(copy.timeout == 9 && copy.tags == ["x", "y"] && copy.retryPolicy?.maxAttempts == 4)
        // And the other way round: the original writes after the copy was made.
        let snapshot = original
        original.deadline = 30
        #expect(snapshot.deadline == nil && original.deadline == 30)
    }

    @Test func aRequestThatSetsNothingHasEveryDefault() {
        let request = Request<Data>("a")
        #expect(request.timeout == nil && request.deadline == nil && request.tags.isEmpty && request.identityHeaders.isEmpty)
        #expect(request.lifetime.kind == .untilFinished && request.group == nil && request.hooks.isEmpty)
        #expect(request.extras == nil)  // nothing set: nothing allocated for the defaults
    }

    /// Async code holds a request across `await client.send(request)`, in the awaiting task's
    /// frame, for as long as it is in flight: a setting stored inline would grow every one of them.
    @Test func aRequestStaysSmall() {
        #expect(MemoryLayout<Request<Data>>.size <= 192)
    }
}
