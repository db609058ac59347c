#if canImport(Glibc) || canImport(Musl)
#if canImport(Glibc)
import Glibc
#else
import Musl
#endif
import Foundation

/// Connects one WebSocket's connect-only handle without blocking a thread, and keeps it connected.
///
/// The handle sits in a multi handle of its own for its whole life (libcurl closes a connect-only
/// connection when its handle leaves the multi handle that made it). The connect (DNS, TCP, the
/// proxy's tunnel, TLS) is driven by libcurl's socket and timer callbacks through dispatch sources
/// on the socket's own queue: a socket connecting to a slow server holds no thread, a cancel ends
/// it at once, and one socket's TLS setup never holds up another's reads. libcurl closes its
/// sockets through `closeSocket`, which waits until no dispatch source watches the descriptor:
/// a descriptor closed under a source could be reused by another socket while the source still
/// watches it.
/// Thread safety: none of its own; every call, and every callback, is on `queue`.
final class CurlSocketConnector {
    /// What a connect ended with: libcurl's code (0: connected) and the socket.
    typealias Done = (_ code: Int32, _ socket: Int32) -> Void

    private let curl: LibCurl
    private let multi: LibCurl.Handle
    private let queue: DispatchQueue
    private var easy: LibCurl.Handle?
    private var done: Done?
    /// The sources watching the sockets libcurl waits on while connecting.
    private var watched: [Int32: [any DispatchSourceProtocol]] = [:]
    /// Sources cancelled but not yet let go of their descriptor, by descriptor.
    private var letting: [Int32: Int] = [:]
    /// Descriptors libcurl closed while a source still held them: closed once it lets go.
    private var closeWhenLetGo: Set<Int32> = []
    private var timer: DispatchSourceTimer?
    /// A connected socket handed over (`handOver`): libcurl lets go of it without closing it.
    private var kept: Int32 = -1
    /// Takes the handed-over socket once no source of the connector's watches it.
    private var taker: ((Int32) -> Void)?

    /// A connector on `queue`, or nil when libcurl gives no multi handle.
    init?(curl: LibCurl, queue: DispatchQueue) {
        guard let multi = curl.multiInit() else { return nil }
        self.curl = curl
        self.multi = multi
        self.queue = queue
    }

    /// Starts connecting `easy` (a connect-only handle, configured; the connector owns it from
    /// now on); `done` runs once on `queue`, unless the connector is released first.
    func connect(_ easy: LibCurl.Handle, done: @escaping Done) {
        let this = Unmanaged.passUnretained(self).toOpaque()
        curl.set(multi: multi, .socketData, this)
        curl.set(multi: multi, .timerData, this)
        curl.set(multi: multi, .socketFunction, unsafeBitCast(Self.socketCallback, to: UnsafeRawPointer.self))
        curl.set(multi: multi, .timerFunction, unsafeBitCast(Self.timerCallback, to: UnsafeRawPointer.self))
        curl.set(easy, .closeSocketData, this)
        curl.set(easy, .closeSocketFunction, unsafeBitCast(Self.closeSocketCallback, to: UnsafeRawPointer.self))
        self.easy = easy
        self.done = done
        // CURLM_OUT_OF_MEMORY and the like: a failed connect (CURLE_OUT_OF_MEMORY).
        if curl.multiAddHandle(multi, easy) != 0 { finish(27, -1) }
    }

    /// Closes the connection and frees the handles; a connect still running is abandoned. Call it
    /// once no source of the caller's watches the socket any more.
    func release() {
        done = nil
        timer?.cancel()
        timer = nil
        if let easy {
            _ = curl.multiRemoveHandle(multi, easy)
            curl.easyCleanup(easy)
        }
        easy = nil
        _ = curl.multiCleanup(multi)
    }

    /// Frees the handles but leaves the connected `socket` open, for the caller to read, write and
    /// close itself: `take` runs on `queue` once no source of the connector's watches the socket
    /// (at once if none does). Only for a connection without TLS, whose bytes are the socket's.
    func handOver(_ socket: Int32, to take: @escaping (Int32) -> Void) {
        kept = socket
        release()
        if letting[socket, default: 0] == 0 { take(socket) } else { taker = take }
    }

    // MARK: Driving the connect

    /// Tells libcurl about `socket` (or its timer) and reports the connect once it ended (last:
    /// what `done` does may release the handles).
    private func drive(_ socket: Int32, _ events: Int32) {
        guard let easy else { return }
        var running: Int32 = 0
        _ = curl.multiSocketAction(multi, socket, events, &running)
        var ended: (code: Int32, socket: Int32)?
        var queued: Int32 = 0
        while let message = curl.multiInfoRead(multi, &queued) {
            // CURLMsg: msg (int) at 0, easy_handle at 8, data.result (CURLcode) at 16.
            guard message.load(as: Int32.self) == LibCurl.messageDone else { continue }
            let code = message.load(fromByteOffset: 16, as: Int32.self)
            ended = (code, code == 0 ? Int32(truncatingIfNeeded: curl.info(easy, long: .activeSocket)) : -1)
        }
        if let ended { finish(ended.code, ended.socket) }
    }

    private func finish(_ code: Int32, _ socket: Int32) {
        timer?.cancel()
        timer = nil
        let done = self.done
        self.done = nil
        done?(code, socket)
    }

    /// libcurl's socket callback: watch `socket` for `what` (`CURL_POLL_*`).
    private func watch(_ socket: Int32, _ what: Int32) {
        for source in watched.removeValue(forKey: socket) ?? [] {
            letting[socket, default: 0] += 1
            source.setCancelHandler { [self] in letGo(socket) }
            source.cancel()
        }
        guard what != LibCurl.pollRemove else { return }
        var sources: [any DispatchSourceProtocol] = []
        if what & LibCurl.pollIn != 0 {
            let reader = DispatchSource.makeReadSource(fileDescriptor: socket, queue: queue)
            reader.setEventHandler { [weak self] in self?.drive(socket, LibCurl.selectIn) }
            sources.append(reader)
        }
        if what & LibCurl.pollOut != 0 {
            let writer = DispatchSource.makeWriteSource(fileDescriptor: socket, queue: queue)
            writer.setEventHandler { [weak self] in self?.drive(socket, LibCurl.selectOut) }
            sources.append(writer)
        }
        for source in sources { source.resume() }
        watched[socket] = sources
    }

    private func letGo(_ socket: Int32) {
        letting[socket, default: 1] -= 1
        guard letting[socket] == 0 else { return }
        letting[socket] = nil
        if closeWhenLetGo.remove(socket) != nil { _ = close(socket) }
        if socket == kept, let taker {
            self.taker = nil
            taker(socket)
        }
    }

    /// libcurl's close-socket callback: closes `socket` now, or once its sources let go of it.
    private func closeSocket(_ socket: Int32) {
        if let sources = watched.removeValue(forKey: socket) {
            // Not told to stop watching first: stop now.
            for source in sources {
                letting[socket, default: 0] += 1
                source.setCancelHandler { [self] in letGo(socket) }
                source.cancel()
            }
        }
        if socket == kept {
            return  // handed over: the new owner closes it
        } else if letting[socket, default: 0] > 0 {
            closeWhenLetGo.insert(socket)
        } else {
            _ = close(socket)
        }
    }

    /// libcurl's timer callback: call it back in `milliseconds`, or never (-1).
    private func schedule(_ milliseconds: Int) {
        timer?.cancel()
        timer = nil
        guard milliseconds >= 0 else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(milliseconds))
        timer.setEventHandler { [weak self] in self?.drive(LibCurl.socketTimeout, 0) }
        timer.resume()
        self.timer = timer
    }

    private static func connector(_ pointer: UnsafeMutableRawPointer?) -> CurlSocketConnector? {
        pointer.map { Unmanaged<CurlSocketConnector>.fromOpaque($0).takeUnretainedValue() }
    }

    private static let socketCallback:
        @convention(c) (LibCurl.Handle?, Int32, Int32, UnsafeMutableRawPointer?, UnsafeMutableRawPointer?) -> Int32 = {
            _, socket, what, connector, _ in
            guard let connector = CurlSocketConnector.connector(connector) else { return -1 }
            connector.watch(socket, what)
            return 0
        }

    private static let timerCallback: @convention(c) (LibCurl.Handle?, Int, UnsafeMutableRawPointer?) -> Int32 = {
        _, milliseconds, connector in
        guard let connector = CurlSocketConnector.connector(connector) else { return -1 }
        connector.schedule(milliseconds)
        return 0
    }

    private static let closeSocketCallback: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32 = { connector, socket in
        guard let connector = CurlSocketConnector.connector(connector) else { return close(socket) }
        connector.closeSocket(socket)
        return 0
    }
}
#endif
