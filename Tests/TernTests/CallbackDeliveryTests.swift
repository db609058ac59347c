import Foundation
import Testing
@testable import Tern

/// Whether the caller runs on the main queue. On Linux the main queue is drained by pool threads
/// once the test runner calls `dispatchMain()`, so `Thread.isMainThread` cannot tell.
func onMainQueue() -> Bool {
    DispatchQueue.getSpecific(key: testMainQueueKey) == "main"
}
private let testMainQueueKey: DispatchSpecificKey<String> = {
    let key = DispatchSpecificKey<String>()
    DispatchQueue.main.setSpecific(key: key, value: "main")
    return key
}()

/// Where and how often callbacks run.
@Suite struct CallbackDeliveryTests {
    @Test func closuresRunOnTheMainQueueByDefault() async throws {
        let client = Client(baseURL: try TestServers.httpbin())
        let (result, onMain) = await withCheckedContinuation { continuation in
            client.send(Request<JSON>("get")) { result in continuation.resume(returning: (result, onMainQueue())) }
        }
        #expect(result.success != nil)
        #expect(onMain)
    }

    @Test func decodingRunsOffTheMainQueueAndTheCallbackOnIt() async throws {
        let client = Client(baseURL: try TestServers.httpbin())
        let decodedOnMain = Locked<Bool?>(nil)
        let serializer = ResponseSerializer<Data>(acceptableContentTypes: nil, emptyValue: Data()) { data, _ in
            decodedOnMain.withLock { $0 = onMainQueue() || Thread.isMainThread }
            return data
        }
        let callbackOnMain: Bool = await withCheckedContinuation { continuation in
            client.send(Request<Data>("get", serializer: serializer)) { _ in continuation.resume(returning: onMainQueue()) }
        }
        #expect(decodedOnMain.withLock { $0 } == false)
        #expect(callbackOnMain)
    }

    @Test func seedStyleSuccessAndFailureConveniencesWork() async throws {
        let client = Client(baseURL: try TestServers.httpbin())
        let echoed: JSON? = await withCheckedContinuation { continuation in
            client.get(
                "get", parameters: ["tag": 7], success: { continuation.resume(returning: $0) },
                failure: { _ in continuation.resume(returning: nil) })
        }
        #expect(echoed?["args"]?["tag"]?.string == "7")
        let failed: TernError? = await withCheckedContinuation { continuation in
            client.post(
                "status/500", parameters: ["a": 1], encoding: .json, success: { _ in continuation.resume(returning: nil) },
                failure: { continuation.resume(returning: $0) })
        }
        #expect(failed?.statusCode == 500)
    }

    @Test func delegateRunsOnTheMainQueueByDefault() async throws {
        let client = Client(baseURL: try TestServers.httpbin())
        let recorder = RecordingDelegate()
        let onMain: Bool = await withCheckedContinuation { continuation in
            recorder.onResult = { _ in continuation.resume(returning: onMainQueue()) }
            client.send(Request<JSON>("get"), delegate: recorder)
        }
        #expect(onMain)
    }

    @Test func aCustomQueueChosenPerClientOrPerRequestIsUsed() async throws {
        let clientQueue = DispatchQueue(label: "client-queue")
        let requestQueue = DispatchQueue(label: "request-queue")
        let key = DispatchSpecificKey<String>()
        clientQueue.setSpecific(key: key, value: "client")
        requestQueue.setSpecific(key: key, value: "request")
        let client = Client(baseURL: try TestServers.httpbin()) { $0.callbackQueue = .queue(clientQueue) }

        let perClient: String? = await withCheckedContinuation { continuation in
            client.send(Request<JSON>("get")) { _ in continuation.resume(returning: DispatchQueue.getSpecific(key: key)) }
        }
        #expect(perClient == "client")

        var request = Request<JSON>("get")
        request.callbackQueue = .queue(requestQueue)
        let perRequest: String? = await withCheckedContinuation { continuation in
            client.send(request) { _ in continuation.resume(returning: DispatchQueue.getSpecific(key: key)) }
        }
        #expect(perRequest == "request")
    }

    @Test func mainDeliveryRunsInlineWhenAlreadyOnTheMainThread() async {
        let ranInline: Bool = await withCheckedContinuation { continuation in
            DispatchQueue.main.async {
                let flag = Locked(false)
                CallbackQueue.main.perform { flag.withLock { $0 = true } }
                // `perform` returned: the work already ran if and only if it ran inline.
                continuation.resume(returning: flag.withLock { $0 })
            }
        }
        #expect(ranInline)
        let deferred: Bool = await withCheckedContinuation { continuation in
            DispatchQueue.main.async {
                let flag = Locked(false)
                CallbackQueue.main.performLater { flag.withLock { $0 = true } }
                continuation.resume(returning: flag.withLock { $0 })
            }
        }
        #expect(!deferred)
    }

    @Test func aCallbackNeverRunsBeforeSendReturnsEvenOnTheMainThread() async {
        // A request that fails inside `send` (bad URL) on the main thread: the handle comes back first.
        let order: [String] = await withCheckedContinuation { continuation in
            DispatchQueue.main.async {
                let log = Locked<[String]>([])
                Client.shared.send(Request<JSON>("")) { _ in
                    log.withLock { $0.append("callback") }
                    continuation.resume(returning: log.withLock { $0 })
                }
                log.withLock { $0.append("returned") }
            }
        }
        #expect(order == ["returned", "callback"])
    }
}
