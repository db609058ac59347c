import Foundation
import Testing
@testable import TernCache

@Suite struct OutboxStoreTests {
    @Test func storedHeadersRoundTripWhateverTheyContain() throws {
        let headers = [
            "X-Quoted": #"say "hi" \ bye"#, "X-Controls": "tab\there\u{1}\u{1f}\r\n", "X-Unicode": "成都 café 🌧",
            "Idempotency-Key": #""0d1f-key""#, "": "", "X-Empty": "",
        ]
        let encoded = OutboxStore.encode(headers)
        #expect(OutboxStore.decode(encoded) == headers)
        let object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: String])
        #expect(object == headers)
        #expect(OutboxStore.encode([:]) == Data("{}".utf8))
    }

    @Test func itemsSurviveReopeningWithTheirHeadersAndBodies() throws {
        let directory = scratchDirectory()
        let headers = ["Content-Type": "application/json; charset=utf-8", "X-Note": #"a "quoted" \ value"#]
        let record = OutboxStore.Record(
            id: "item-1", orderingGroup: "chat", apiGroup: nil, method: "POST", url: "http://127.0.0.1:1/messages",
            headers: headers, bodyFile: nil, bodySize: 5, idempotencyKey: "key-1", created: 1_000)
        let seq = try OutboxStore(directory: directory, synchronous: false).insert(record, body: Data("hello".utf8))
        let reopened = try OutboxStore(directory: directory, synchronous: true)
        let stored = try #require(try reopened.records().first)
        #expect(stored.seq == seq)
        #expect(stored.headers == headers)
        #expect(stored.orderingGroup == "chat")
        #expect(try reopened.body(of: seq) == Data("hello".utf8))
    }
}
