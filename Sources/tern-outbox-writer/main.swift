import Foundation
import Tern

// tern-outbox-writer DIR BASE NAME RUN [drain]: enqueues writes to BASE/effects/NAME in the outbox
// in DIR, as fast as it can, while the outbox sends them, until it is killed; prints
// "accepted RUN-i" once `enqueue` returned for body "RUN-i". With `drain` it enqueues nothing and
// exits once the outbox has sent everything ("drained", or "pending N" after 60 s). The outbox
// crash tests (Tests/TernTests/Outbox/OutboxCrashTests.swift) SIGKILL it at random moments and
// check with the fixture server that every accepted write took effect exactly once.

let arguments = CommandLine.arguments
guard arguments.count >= 5 else {
    FileHandle.standardError.write(Data("usage: tern-outbox-writer DIR BASE NAME RUN [drain]\n".utf8))
    exit(2)
}
let client = Client(baseURL: arguments[2]) {
    $0.callbackQueue = .immediate
    $0.timeout = 10
}
var configuration = OutboxConfiguration()
configuration.directory = URL(fileURLWithPath: arguments[1])
configuration.initialRetryDelay = 0.05
configuration.maximumRetryDelay = 0.2
configuration.maximumCount = 100_000
let name = arguments[3]
let run = arguments[4]

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

do {
    let outbox = try Outbox(client: client, configuration: configuration)
    say("ready")
    if arguments.count > 5, arguments[5] == "drain" {
        let end = Date().addingTimeInterval(60)
        while outbox.pendingCount > 0 && Date() < end { Thread.sleep(forTimeInterval: 0.02) }
        say(outbox.pendingCount == 0 ? "drained" : "pending \(outbox.pendingCount)")
        exit(outbox.pendingCount == 0 ? 0 : 1)
    }
    var index = 0
    while true {
        let body = "\(run)-\(index)"
        let request = Request<Data>(
            "effects/\(name)", method: .post, body: .data(Data(body.utf8), contentType: "text/plain"))
        // Some items in ordering groups, some on their own.
        try outbox.enqueue(request, orderingGroup: index % 4 == 0 ? nil : "group-\(index % 3)")
        say("accepted \(body)")
        index += 1
        Thread.sleep(forTimeInterval: Double(index % 3) / 1000)
    }
} catch {
    FileHandle.standardError.write(Data("tern-outbox-writer: \(error)\n".utf8))
    exit(1)
}
