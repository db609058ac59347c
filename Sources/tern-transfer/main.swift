import Foundation
import Tern

// tern-transfer: Tern's transfers from the command line, in a process of their own — the resume
// tests SIGKILL it mid-download and start it again, and the large-transfer tests read its peak
// memory undisturbed by other tests.
//
//   tern-transfer download URL FILE [--checksum]   download URL to FILE, resumably: run it again
//                                                  after Ctrl-C or a kill and it continues
//   tern-transfer upload URL FILE [NAME=VALUE ...] POST FILE as the multipart part "file", with
//                                                  text fields; prints the response body
//   tern-transfer get URL [LIMIT]                   GET URL into memory with a size limit of LIMIT bytes;
//                                                  prints "ok <bytes>" or "error <TernError>"
//   tern-transfer events|events-async URL           reads URL's server-sent events (closure or async
//                                                  form, no size limit); prints "ok <events>" or "error <TernError>"
//   --direct (anywhere)                            use no proxy, whatever http_proxy says
//
// Prints "progress up|down <bytes> <total>" lines (coalesced), then "peak-rss <bytes>" (Linux: VmHWM),
// then "done <size> <resumed-from> <sha256 or ->" for a download or "response <body>" for an upload.

let arguments = Array(CommandLine.arguments.dropFirst()).filter { $0 != "--direct" }
let direct = CommandLine.arguments.contains("--direct")
guard arguments.count >= 2, ["download", "upload", "get", "events", "events-async"].contains(arguments[0]),
    let url = URL(string: arguments[1]), url.host != nil,
    ["get", "events", "events-async"].contains(arguments[0]) || arguments.count >= 3
else {
    FileHandle.standardError.write(
        Data(
            "usage: tern-transfer download URL FILE [--checksum] | upload URL FILE [NAME=VALUE ...] | get URL [LIMIT] | events URL\n".utf8))
    exit(2)
}
let file = URL(fileURLWithPath: arguments.count > 2 ? arguments[2] : "/dev/null")
let client = Client(baseURL: nil) {
    $0.timeout = 600
    if direct { $0.transportSettings.proxy = .direct }
    $0.callbackQueue = .queue(DispatchQueue(label: "tern-transfer.progress"))
}

@Sendable func show(_ progress: TransferProgress) {
    // One write per line, unbuffered: a killed process has printed every line it got to.
    let direction = progress.direction == .upload ? "up" : "down"
    FileHandle.standardOutput.write(
        Data("progress \(direction) \(progress.completedBytes) \(progress.expectedBytes.map(String.init) ?? "?")\n".utf8))
}

func printPeakMemory() {
    if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kilobytes = Int(line.split(separator: " ")[1])
    {
        print("peak-rss \(kilobytes * 1024)")
    }
}

if arguments[0].hasPrefix("events") {
    var request = Request<Data>(url.absoluteString)
    request.maximumResponseSize = Int.max  // a long-lived stream: only the event limit applies
    let outcome: Result<Int, TernError>
    if arguments[0] == "events" {
        let count = Locked(0)
        outcome = await withCheckedContinuation { continuation in
            client.events(request, onEvent: { _ in count.withLock { $0 += 1 } }) { result in
                continuation.resume(returning: result.map { _ in count.withLock { $0 } })
            }
        }
    } else {
        do throws(TernError) {
            var count = 0
            do {
                for try await _ in client.stream(request).events { count += 1 }
            } catch {
                throw error as? TernError ?? .clientInvalidated
            }
            outcome = .success(count)
        } catch {
            outcome = .failure(error)
        }
    }
    printPeakMemory()
    switch outcome {
    case .success(let count): print("ok \(count)")
    case .failure(let error): print("error \(error)")
    }
    exit(0)
}

if arguments[0] == "get" {
    var request = Request<Data>(url.absoluteString)
    request.maximumResponseSize = arguments.count > 2 ? Int(arguments[2]) : nil
    do {
        let response = try await client.send(request)
        printPeakMemory()
        print("ok \(response.data.count)")
    } catch {
        printPeakMemory()
        print("error \(error)")
    }
    exit(0)
}

do {
    if arguments[0] == "download" {
        let options = DownloadOptions(isResumable: true, computesChecksum: arguments.contains("--checksum"))
        let saved = try await client.send(Request.download(url.absoluteString, to: file, options: options).onProgress(show)).value
        printPeakMemory()
        print("done \(saved.size) \(saved.resumedFrom) \(saved.sha256 ?? "-")")
    } else {
        let body = RequestBody.multipart { form in
            for field in arguments.dropFirst(3) {
                let pair = field.split(separator: "=", maxSplits: 1).map(String.init)
                form.append(pair.count == 2 ? pair[1] : "", name: pair[0])
            }
            form.append(fileAt: file, name: "file")
        }
        let response = try await client.send(Request<String>(url.absoluteString, method: .post, body: body).onProgress(show))
        printPeakMemory()
        print("response \(response.value)")
    }
} catch {
    FileHandle.standardError.write(Data("tern-transfer: \(error)\n".utf8))
    exit(1)
}
