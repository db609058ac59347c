import Foundation
import Tern

// tern-download URL FILE [--checksum]: downloads URL to FILE with Tern, resumably — run it again
// after Ctrl-C, a dropped connection or a kill and it continues from the bytes on disk. Prints
// "progress <bytes> <total>" lines (coalesced), then "peak-rss <bytes>" (Linux: VmHWM) and
// "done <size> <resumed-from> <sha256 or ->". The resume tests SIGKILL it mid-download and start
// it again; the large-download test reads its peak memory, undisturbed by other tests.

let arguments = CommandLine.arguments
guard arguments.count >= 3, let url = URL(string: arguments[1]), url.host != nil else {
    FileHandle.standardError.write(Data("usage: tern-download URL FILE [--checksum]\n".utf8))
    exit(2)
}
let destination = URL(fileURLWithPath: arguments[2])
let options = DownloadOptions(isResumable: true, computesChecksum: arguments.contains("--checksum"))
let client = Client(baseURL: nil) {
    $0.timeout = 600
    $0.callbackQueue = .queue(DispatchQueue(label: "tern-download.progress"))
}
let request = Request.download(url.absoluteString, to: destination, options: options).onProgress { progress in
    // One write per line, unbuffered: a killed process has printed every line it got to.
    FileHandle.standardOutput.write(Data("progress \(progress.completedBytes) \(progress.expectedBytes.map(String.init) ?? "?")\n".utf8))
}
do {
    let file = try await client.send(request).value
    if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
       let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
       let kilobytes = Int(line.split(separator: " ")[1]) {
        print("peak-rss \(kilobytes * 1024)")
    }
    print("done \(file.size) \(file.resumedFrom) \(file.sha256 ?? "-")")
} catch {
    FileHandle.standardError.write(Data("tern-download: \(error)\n".utf8))
    exit(1)
}
