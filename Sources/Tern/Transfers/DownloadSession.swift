import Foundation

/// One download request's files and resume state: the partial file beside the destination, the
/// validator kept beside it, the offset each attempt resumes from, and the checksum as the bytes
/// arrive. The `Call` asks it to prepare each attempt and to finish; its `Attempt`s feed it.
///
/// Files: `<destination>.terndownload` holds the body as it arrives and becomes the destination
/// by an atomic rename (same folder, so same file system); `<destination>.terndownload.resume`
/// holds the URL and validator of a resumable download, written as the response head arrives,
/// before any body byte, so a process killed mid-body leaves everything the next run needs.
/// Thread safety: safe to use from any thread; the attempts of one call run one after another.
final class DownloadSession: Sendable {
    let target: DownloadTarget
    let partialURL: URL
    let resumeURL: URL
    private struct State {
        /// The offset the current attempt asked to resume from (0: from the start).
        var requestedOffset: Int64 = 0
        /// What the current response resumed from, once its head arrived.
        var resumedFrom: Int64 = 0
        /// The record of the partial file the current attempt asked to continue.
        var resuming: ResumeRecord?
        /// Why the current response cannot continue the partial file (its validator or range
        /// differ): the file was removed and the request starts over from byte 0.
        var mismatch: String?
        /// The checksum of a download that started from byte 0, fed as the bytes arrive.
        var digest: Checksum?
        var finished = false
        var succeeded = false
    }
    private let state = Locked(State())

    init(_ target: DownloadTarget) {
        self.target = target
        partialURL = URL(fileURLWithPath: target.destination.path + ".terndownload")
        resumeURL = URL(fileURLWithPath: target.destination.path + ".terndownload.resume")
    }

    private var files: FileManager { FileManager.default }

    /// Checks the destination before anything is sent: a file there that may not be replaced,
    /// or a folder that is missing (and not to be created), is the caller's mistake.
    func checkDestination() throws(TernError) {
        let destination = target.destination
        guard destination.isFileURL else { throw .invalidRequest(.unusableDestination(destination, reason: "not a file URL")) }
        var isFolder: ObjCBool = false
        if files.fileExists(atPath: destination.path, isDirectory: &isFolder) {
            if isFolder.boolValue { throw .invalidRequest(.unusableDestination(destination, reason: "a folder is there")) }
            if !target.options.replacesExistingFile { throw .invalidRequest(.destinationExists(destination)) }
        }
        let folder = destination.deletingLastPathComponent()
        guard !files.fileExists(atPath: folder.path) else { return }
        guard target.options.createsIntermediateDirectories else {
            throw .invalidRequest(.unusableDestination(destination, reason: "its folder does not exist"))
        }
        do {
            try files.createDirectory(at: folder, withIntermediateDirectories: true)
        } catch {
            throw .invalidRequest(.unusableDestination(destination, reason: "cannot create its folder: \(error.localizedDescription)"))
        }
    }

    /// Prepares one attempt of `request`: when a resumable partial file from the same URL has a
    /// validator, asks for the rest of it (`Range` + `If-Range`). Returns the offset the
    /// transport writes from (a 206 continues there, any other 2xx starts the file over).
    func prepare(_ request: inout URLRequest) -> Int64 {
        var offset: Int64 = 0
        var resuming: ResumeRecord?
        if target.options.isResumable, let saved = ResumeRecord.read(from: resumeURL), saved.url == request.url?.absoluteString,
            let size = (try? files.attributesOfItem(atPath: partialURL.path))?[.size] as? NSNumber, size.int64Value > 0
        {
            offset = size.int64Value
            resuming = saved
            request.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
            request.setValue(saved.validator, forHTTPHeaderField: "If-Range")
        } else {
            request.setValue(nil, forHTTPHeaderField: "Range")
            request.setValue(nil, forHTTPHeaderField: "If-Range")
        }
        state.withLock { state in
            state.requestedOffset = offset
            state.resuming = resuming
            state.mismatch = nil
        }
        return offset
    }

    /// A response head arrived. Returns whether its body goes to the file (a 2xx, as the
    /// transport decides the same way) and the bytes it continues from (a 206: the offset asked
    /// for; else 0). Records the validator of a resumable download before any body byte.
    ///
    /// A 206 continues the partial file only when it is the same version from the same byte
    /// (`ResumeRecord.mismatch`): otherwise the partial file and its record are removed at once,
    /// so that nothing resumes from them, and `startsOver` has the request start from byte 0.
    func responseStarted(_ response: HTTPURLResponse) -> (toFile: Bool, resumedFrom: Int64) {
        guard (200..<300).contains(response.statusCode) else { return (false, 0) }
        let (resumedFrom, mismatch): (Int64, String?) = state.withLock { state in
            state.resumedFrom = response.statusCode == 206 ? state.requestedOffset : 0
            state.digest = target.options.computesChecksum && state.resumedFrom == 0 ? Checksum() : nil
            if response.statusCode == 206, state.requestedOffset > 0, let resuming = state.resuming {
                state.mismatch = resuming.mismatch(with: response, at: state.requestedOffset)
            }
            return (state.resumedFrom, state.mismatch)
        }
        if mismatch != nil {
            removePartial()
        } else if target.options.isResumable, resumedFrom == 0 {
            if let record = ResumeRecord(response) {
                record.write(to: resumeURL)
            } else {
                try? files.removeItem(at: resumeURL)  // nothing to resume with next time
            }
        }
        return (true, resumedFrom)
    }

    /// Bytes of a 2xx body were written to the file.
    func received(_ chunk: Data) {
        state.withLock { state in state.digest?.update(chunk) }
    }

    /// Whether the attempt answered with `statusCode` should be followed by one from byte 0: the server
    /// refused the range (416) of a partial file it no longer matches, or answered with a 206
    /// that cannot continue it (another version, another range). The partial file is removed
    /// first. The next attempt asks for no range, so a request starts over at most once so.
    func startsOver(afterStatus statusCode: Int) -> Bool {
        let (offset, mismatch) = state.withLock { ($0.requestedOffset, $0.mismatch) }
        guard offset > 0, statusCode == 416 || mismatch != nil else { return false }
        removePartial()
        return true
    }

    /// The whole body is in the partial file and the response passed validation: checks that a
    /// resumed body continued where the file ended, computes the checksum, and moves the file
    /// into place. Runs off the transport's thread.
    func complete(_ response: HTTPURLResponse) throws(TernError) -> DownloadedFile {
        let (resumedFrom, digest) = state.withLock { ($0.resumedFrom, $0.digest) }
        do {
            if response.statusCode == 206, let start = ResumeRecord.contentRange(of: response)?.start, start != resumedFrom {
                removePartial()  // the bytes on disk no longer line up: not worth resuming
                throw URLError(
                    .cannotParseResponse,
                    userInfo: [
                        NSLocalizedDescriptionKey:
                            "the server resumed at byte \(start), the partial file ends at \(resumedFrom)"
                    ])
            }
            if !files.fileExists(atPath: partialURL.path) {
                // An empty 2xx body: nothing was written, the file is empty.
                guard files.createFile(atPath: partialURL.path, contents: Data()) else { throw URLError(.cannotCreateFile) }
            }
            let size = ((try files.attributesOfItem(atPath: partialURL.path))[.size] as? NSNumber)?.int64Value ?? 0
            let sha256: String? =
                if target.options.computesChecksum {
                    try digest?.hexDigest() ?? Checksum.hexDigest(ofFile: partialURL)
                } else { nil }
            try moveIntoPlace()
            state.withLock { $0.succeeded = true }
            try? files.removeItem(at: resumeURL)
            return DownloadedFile(url: target.destination, size: size, resumedFrom: resumedFrom, sha256: sha256)
        } catch let error as TernError {
            throw error
        } catch let error as URLError {
            if !target.options.isResumable { removePartial() }
            throw .transport(error)
        } catch {
            if !target.options.isResumable { removePartial() }
            throw .transport(URLError(.cannotMoveFile, userInfo: [NSLocalizedDescriptionKey: error.localizedDescription]))
        }
    }

    private func moveIntoPlace() throws {
        let destination = target.destination
        if files.fileExists(atPath: destination.path) {
            guard target.options.replacesExistingFile else { throw TernError.invalidRequest(.destinationExists(destination)) }
        }
        // rename(2) replaces an existing file atomically: readers see the old file or the new one.
        guard rename(partialURL.path, destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            throw URLError(
                .cannotMoveFile, userInfo: [NSLocalizedDescriptionKey: "cannot move \(partialURL.path) to \(destination.path): \(reason)"])
        }
    }

    /// The request ended (delivered, failed, cancelled, timed out), or an exchange of an ended
    /// request completed: a download that did not succeed leaves nothing behind unless it is
    /// resumable. Safe to call more than once.
    func ended() {
        let succeeded = state.withLock { state -> Bool in
            state.finished = true
            return state.succeeded
        }
        if !succeeded, !target.options.isResumable { removePartial() }
    }

    /// Whether the request has ended: a late exchange then cleans up after itself.
    var hasEnded: Bool { state.withLock { $0.finished } }

    private func removePartial() {
        try? files.removeItem(at: partialURL)
        try? files.removeItem(at: resumeURL)
    }
}
