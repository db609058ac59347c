import Foundation
import Tern
import TernStubs

// The samples of the Offline Writes article, compiled.

func outboxLike(api: Client, postID: String) throws -> OutboxItem.ID {
    let outbox = try Outbox(client: api)
    let like = Request<JSON>("posts/\(postID)/likes", method: .post)
    return try outbox.enqueue(like)
}

func outboxMessages(outbox: Outbox, conversation: String, text: String) throws {
    let message = Request<JSON>(
        "conversations/\(conversation)/messages", method: .post, body: .json(["text": text]))
    let id = try outbox.enqueue(message, orderingGroup: "conversation-\(conversation)")
    saveMessage(text, outboxID: id.rawValue)
}

func outboxEvents(outbox: Outbox) async {
    for await event in outbox.events {
        switch event {
        case .delivered(let item): markSent(item.id.rawValue, answer: item.responseBody)
        case .failed(let item): showFailed(item.id.rawValue, reason: "\(item.state)")
        case .willRetry(let item, let delay): print(item.url, "again in", delay, "s")
        case .enqueued, .removed: break
        }
    }
}

func outboxAtLaunch(outbox: Outbox, savedID: String) {
    switch outbox.item(OutboxItem.ID(savedID))?.state {
    case .delivered?: markSent(savedID, answer: nil)
    case .failed(let failure)?: showFailed(savedID, reason: failure.description)
    case .queued?, .sending?: break  // still on its way
    case nil: break  // cancelled, or delivered longer ago than keepsDeliveredFor
    }
}

func outboxConfiguration(api: Client) throws -> Outbox {
    var configuration = OutboxConfiguration()
    configuration.name = "writes"  // Application Support/Tern/Outbox/writes
    configuration.maximumCount = 500
    configuration.maximumAge = 3 * 24 * 3600  // a like older than 3 days is dropped
    configuration.networkMonitor = NetworkMonitor.system
    return try Outbox(client: api, configuration: configuration)
}

func outboxBadge(outbox: Outbox) async {
    for await count in outbox.pendingCounts { updateBadge(count) }
}

func outboxInspect(outbox: Outbox) {
    for item in outbox.items {
        if case .failed = item.state { outbox.retry(item.id) }  // or outbox.cancel(item.id)
    }
    outbox.replay()  // "sync now": send what waits for its backoff
}

func outboxStubs() async throws {
    let stubs = StubTransport()
    stubs.stub(.post("/v1/favourites"), .status(201))
    let api = Client(baseURL: "https://api.test/v1") { $0.transport = stubs }
    var configuration = OutboxConfiguration()
    configuration.directory = FileManager.default.temporaryDirectory
        .appendingPathComponent(UUID().uuidString)
    configuration.networkMonitor = stubs.networkMonitor
    let outbox = try Outbox(client: api, configuration: configuration)
    stubs.goOffline()
    let favourite = Request<JSON>("favourites", method: .post, body: .json(["city": "成都"]))
    let id = try outbox.enqueue(favourite)
    stubs.goOnline()
    let item = await outbox.outcome(of: id)  // nil only for an id this outbox never had
    print(item?.state as Any)  // delivered, with the stub's 201
}

private func saveMessage(_ text: String, outboxID: String) {}
private func markSent(_ id: String, answer: Data?) {}
private func showFailed(_ id: String, reason: String) {}
private func updateBadge(_ count: Int) {}
