#if canImport(Glibc) || canImport(Musl)
#if canImport(Glibc)
import Glibc
#else
import Musl
#endif
import CTernCurl
import Foundation

/// The system libcurl, loaded at run time: `libcurl.so.4` is always present where
/// FoundationNetworking runs (it links it), its headers and development package are not. The
/// functions and constants Tern uses are declared here, written for this project from libcurl's
/// documented ABI; the variadic ones go through `CTernCurl`.
/// Thread safety: immutable after loading; libcurl's rules for its handles are the caller's
/// (`CurlEventLoop` makes every call on a handle under one lock).
// Sendable: C function pointers and version facts, set once when loaded and never changed.
struct LibCurl: @unchecked Sendable {
    typealias Handle = UnsafeMutableRawPointer

    let version: String
    let versionNumber: UInt32
    /// Whether this libcurl was built with zstd: it then decodes `Content-Encoding: zstd`.
    let decodesZstd: Bool
    private let easySetopt: UnsafeMutableRawPointer
    private let easyGetinfo: UnsafeMutableRawPointer
    private let multiSetopt: UnsafeMutableRawPointer
    private let multiFdset: UnsafeMutableRawPointer
    let easyInit: @convention(c) () -> Handle?
    let easyCleanup: @convention(c) (Handle?) -> Void
    let easyReset: @convention(c) (Handle?) -> Void
    let easyStrerror: @convention(c) (Int32) -> UnsafePointer<CChar>?
    let easyPause: @convention(c) (Handle?, Int32) -> Int32
    let multiInit: @convention(c) () -> Handle?
    let multiCleanup: @convention(c) (Handle?) -> Int32
    let multiAddHandle: @convention(c) (Handle?, Handle?) -> Int32
    let multiRemoveHandle: @convention(c) (Handle?, Handle?) -> Int32
    let multiPerform: @convention(c) (Handle?, UnsafeMutablePointer<Int32>?) -> Int32
    let multiPoll: @convention(c) (Handle?, UnsafeMutableRawPointer?, UInt32, Int32, UnsafeMutablePointer<Int32>?) -> Int32
    let multiTimeout: @convention(c) (Handle?, UnsafeMutablePointer<Int>?) -> Int32
    let multiInfoRead: @convention(c) (Handle?, UnsafeMutablePointer<Int32>?) -> UnsafeMutableRawPointer?
    let slistAppend: @convention(c) (Handle?, UnsafePointer<CChar>?) -> Handle?
    let slistFreeAll: @convention(c) (Handle?) -> Void
    /// For a connection Tern reads and writes itself (WebSocket): connect (driven by socket
    /// events), then send and receive.
    let multiSocketAction: @convention(c) (Handle?, Int32, Int32, UnsafeMutablePointer<Int32>?) -> Int32
    let easySend: @convention(c) (Handle?, UnsafeRawPointer?, Int, UnsafeMutablePointer<Int>?) -> Int32
    let easyRecv: @convention(c) (Handle?, UnsafeMutableRawPointer?, Int, UnsafeMutablePointer<Int>?) -> Int32

    /// The oldest libcurl Tern uses: `curl_multi_poll` arrived in 7.68.0.
    static let minimumVersion: UInt32 = 0x07_44_00

    /// The loaded library, or why there is none (no libcurl, a missing function, too old).
    static let loaded: Result<LibCurl, LoadFailure> = load()

    /// Why libcurl could not be used.
    struct LoadFailure: Error, CustomStringConvertible {
        let description: String
    }

    private static func load() -> Result<LibCurl, LoadFailure> {
        // TERN_LIBCURL names another build (a newer libcurl, say), or hides it ("none").
        let names: [String] = ProcessInfo.processInfo.environment["TERN_LIBCURL"].map { [$0] } ?? ["libcurl.so.4", "libcurl.so"]
        guard let library = names.lazy.compactMap({ name in dlopen(name, RTLD_NOW | RTLD_LOCAL) }).first else {
            return .failure(LoadFailure(description: "cannot load \(names.joined(separator: " or "))"))
        }
        func symbol(_ name: String) -> UnsafeMutableRawPointer? { dlsym(library, name) }
        func function<T>(_ name: String, as type: T.Type) throws(LoadFailure) -> T {
            guard let pointer = symbol(name) else { throw LoadFailure(description: "libcurl lacks \(name)") }
            return unsafeBitCast(pointer, to: type)
        }
        do throws(LoadFailure) {
            typealias VersionInfo = @convention(c) (Int32) -> UnsafeRawPointer?
            // curl_version_info_data: age (int), version (char *), version_num (unsigned int), …
            guard let info = try function("curl_version_info", as: VersionInfo.self)(0) else {
                throw LoadFailure(description: "curl_version_info returned nothing")
            }
            let version = info.load(fromByteOffset: 8, as: UnsafePointer<CChar>?.self).map { String(cString: $0) } ?? "?"
            let number = info.load(fromByteOffset: 16, as: UInt32.self)
            // … host (char *), features (int): CURL_VERSION_ZSTD is bit 26.
            let features = info.load(fromByteOffset: 32, as: Int32.self)
            guard number >= minimumVersion else {
                throw LoadFailure(description: "libcurl \(version) is older than 7.68.0")
            }
            guard let easySetopt = symbol("curl_easy_setopt"), let easyGetinfo = symbol("curl_easy_getinfo"),
                let multiSetopt = symbol("curl_multi_setopt"), let multiFdset = symbol("curl_multi_fdset")
            else {
                throw LoadFailure(description: "libcurl lacks curl_easy_setopt, curl_easy_getinfo, curl_multi_setopt or curl_multi_fdset")
            }
            typealias GlobalInit = @convention(c) (Int) -> Int32
            // Thread-safe and reference-counted with FoundationNetworking's own call on 7.84+ builds.
            guard try function("curl_global_init", as: GlobalInit.self)(3) == 0 else {
                throw LoadFailure(description: "curl_global_init failed")
            }
            return .success(
                LibCurl(
                    version: version, versionNumber: number, decodesZstd: features & (1 << 26) != 0, easySetopt: easySetopt,
                    easyGetinfo: easyGetinfo, multiSetopt: multiSetopt,
                    multiFdset: multiFdset,
                    easyInit: try function("curl_easy_init", as: (@convention(c) () -> Handle?).self),
                    easyCleanup: try function("curl_easy_cleanup", as: (@convention(c) (Handle?) -> Void).self),
                    easyReset: try function("curl_easy_reset", as: (@convention(c) (Handle?) -> Void).self),
                    easyStrerror: try function("curl_easy_strerror", as: (@convention(c) (Int32) -> UnsafePointer<CChar>?).self),
                    easyPause: try function("curl_easy_pause", as: (@convention(c) (Handle?, Int32) -> Int32).self),
                    multiInit: try function("curl_multi_init", as: (@convention(c) () -> Handle?).self),
                    multiCleanup: try function("curl_multi_cleanup", as: (@convention(c) (Handle?) -> Int32).self),
                    multiAddHandle: try function("curl_multi_add_handle", as: (@convention(c) (Handle?, Handle?) -> Int32).self),
                    multiRemoveHandle: try function("curl_multi_remove_handle", as: (@convention(c) (Handle?, Handle?) -> Int32).self),
                    multiPerform: try function(
                        "curl_multi_perform", as: (@convention(c) (Handle?, UnsafeMutablePointer<Int32>?) -> Int32).self),
                    multiPoll: try function(
                        "curl_multi_poll",
                        as: (@convention(c) (Handle?, UnsafeMutableRawPointer?, UInt32, Int32, UnsafeMutablePointer<Int32>?) -> Int32).self),
                    multiTimeout: try function(
                        "curl_multi_timeout", as: (@convention(c) (Handle?, UnsafeMutablePointer<Int>?) -> Int32).self),
                    multiInfoRead: try function(
                        "curl_multi_info_read",
                        as: (@convention(c) (Handle?, UnsafeMutablePointer<Int32>?) -> UnsafeMutableRawPointer?).self),
                    slistAppend: try function("curl_slist_append", as: (@convention(c) (Handle?, UnsafePointer<CChar>?) -> Handle?).self),
                    slistFreeAll: try function("curl_slist_free_all", as: (@convention(c) (Handle?) -> Void).self),
                    multiSocketAction: try function(
                        "curl_multi_socket_action",
                        as: (@convention(c) (Handle?, Int32, Int32, UnsafeMutablePointer<Int32>?) -> Int32).self),
                    easySend: try function(
                        "curl_easy_send", as: (@convention(c) (Handle?, UnsafeRawPointer?, Int, UnsafeMutablePointer<Int>?) -> Int32).self),
                    easyRecv: try function(
                        "curl_easy_recv",
                        as: (@convention(c) (Handle?, UnsafeMutableRawPointer?, Int, UnsafeMutablePointer<Int>?) -> Int32).self)))
        } catch {
            return .failure(error)
        }
    }

    // MARK: Variadic calls, through CTernCurl

    @discardableResult
    func set(_ easy: Handle, _ option: Option, _ value: Int) -> Int32 {
        tern_curl_setopt_long(easySetopt, easy, option.rawValue, value)
    }

    @discardableResult
    func set(_ easy: Handle, _ option: Option, _ pointer: UnsafeRawPointer?) -> Int32 {
        tern_curl_setopt_pointer(easySetopt, easy, option.rawValue, pointer)
    }

    @discardableResult
    func set(_ easy: Handle, _ option: Option, offset: Int64) -> Int32 {
        tern_curl_setopt_offset(easySetopt, easy, option.rawValue, offset)
    }

    /// Sets a string option (libcurl copies strings).
    @discardableResult
    func set(_ easy: Handle, _ option: Option, _ string: String) -> Int32 {
        string.withCString { tern_curl_setopt_pointer(easySetopt, easy, option.rawValue, $0) }
    }

    @discardableResult
    func set(multi: Handle, _ option: MultiOption, _ value: Int) -> Int32 {
        tern_curl_setopt_long(multiSetopt, multi, option.rawValue, value)
    }

    @discardableResult
    func set(multi: Handle, _ option: MultiOption, _ pointer: UnsafeRawPointer?) -> Int32 {
        tern_curl_setopt_pointer(multiSetopt, multi, option.rawValue, pointer)
    }

    /// A `long` or `curl_off_t` piece of information about a transfer (both 64 bits here).
    func info(_ easy: Handle, long info: Info) -> Int {
        var value = 0
        _ = tern_curl_getinfo(easyGetinfo, easy, info.rawValue, &value)
        return value
    }

    /// The one socket `multi`'s transfers wait on, for input only (`curl_multi_fdset`); -1 when
    /// they wait on several, or to send; -2 when it reports none (a socket at `FD_SETSIZE`, 1024,
    /// or above is left out).
    func singleInputSocket(_ multi: Handle) -> Int32 {
        tern_curl_single_input_socket(multiFdset, multi)
    }

    /// libcurl's text for `code`.
    func describe(_ code: Int32) -> String {
        easyStrerror(code).map { String(cString: $0) } ?? "libcurl error \(code)"
    }

    /// The `URLError` closest to a libcurl result code.
    func urlError(_ code: Int32, detail: String) -> URLError {
        let kind: URLError.Code =
            switch code {
            case 1: .unsupportedURL
            case 3: .badURL
            case 5, 6: .cannotFindHost
            case 7: .cannotConnectToHost
            case 8: .badServerResponse
            case 18, 55, 56: .networkConnectionLost
            case 28: .timedOut
            case 35, 58, 77, 98: .secureConnectionFailed
            case 47: .httpTooManyRedirects
            case 52: .zeroByteResource
            case 60, 90: .serverCertificateUntrusted
            case 61: .cannotDecodeContentData
            default: .unknown
            }
        let text = detail.isEmpty ? describe(code) : detail
        return URLError(kind, userInfo: [NSLocalizedDescriptionKey: text, "CURLcode": Int(code)])
    }

    // MARK: Constants (curl.h / multi.h)

    /// Easy options: type base (long 0, object pointer 10000, function pointer 20000, off_t 30000) + number.
    enum Option: Int32 {
        case writeData = 10001, url = 10002, readData = 10009, errorBuffer = 10010, writeFunction = 20011
        case readFunction = 20012, httpHeader = 10023, headerData = 10029, customRequest = 10036
        case noProgress = 43, noBody = 44, upload = 46, post = 47, followLocation = 52, xferInfoData = 10057
        case headerFunction = 20079, httpGet = 80, noSignal = 99, acceptEncoding = 10102
        case inFileSizeLarge = 30115, postFieldSizeLarge = 30120, timeoutMS = 155, copyPostFields = 10165
        case protocols = 181, xferInfoFunction = 20219, pipeWait = 237, httpAuth = 107, username = 10173
        case password = 10174, seekFunction = 20167, seekData = 10168, bufferSize = 98
        case sslCert = 10025, keyPassword = 10026, sslVersion = 32, caInfo = 10065, sslKey = 10087, caPath = 10097
        case pinnedPublicKey = 10230, proxy = 10004, noProxy = 10177, connectTo = 10243
        case connectOnly = 141, connectTimeoutMS = 156, closeSocketFunction = 20208, closeSocketData = 10209
    }

    /// Multi options.
    enum MultiOption: Int32 {
        case pipelining = 3, maxConnects = 6, maxHostConnections = 7
        case socketFunction = 20001, socketData = 10002, timerFunction = 20004, timerData = 10005
    }

    /// `curl_easy_getinfo` items: type base (string 0x100000, long 0x200000, off_t 0x600000) + number.
    enum Info: Int32 {
        case responseCode = 0x20_0002, numConnects = 0x20_001A, httpVersion = 0x20_002E
        case sizeUploadT = 0x60_0007, sizeDownloadT = 0x60_0008, totalTimeT = 0x60_0032, nameLookupTimeT = 0x60_0033
        case connectTimeT = 0x60_0034, startTransferTimeT = 0x60_0036, appConnectTimeT = 0x60_0038
        /// `CURLINFO_ACTIVESOCKET`: the socket of a connect-only handle (a `curl_socket_t`, an `int`).
        case activeSocket = 0x50_002C
    }

    /// `CURLPROTO_HTTP | CURLPROTO_HTTPS`.
    static let httpProtocols = 3
    /// `CURLMSG_DONE`.
    static let messageDone: Int32 = 1
    /// `CURLAUTH_BASIC | CURLAUTH_DIGEST`: with two kinds allowed libcurl asks first and answers
    /// the server's challenge, rather than sending the credential unasked.
    static let challengedAuth = 3
    /// `CURL_SSLVERSION_TLSv1_2` and `_TLSv1_3`: the oldest version accepted.
    static let tlsVersion1_2 = 6
    static let tlsVersion1_3 = 7
    /// `CURLE_AGAIN`: a connect-only socket has nothing to read, or no room to write, now.
    static let again: Int32 = 81
    /// `CURL_POLL_IN`, `_OUT` and `_REMOVE`: what a socket callback asks to watch.
    static let pollIn: Int32 = 1
    static let pollOut: Int32 = 2
    static let pollRemove: Int32 = 4
    /// `CURL_CSELECT_IN` and `_OUT` for `curl_multi_socket_action`, and `CURL_SOCKET_TIMEOUT`.
    static let selectIn: Int32 = 1
    static let selectOut: Int32 = 2
    static let socketTimeout: Int32 = -1
    /// `CURLE_SSL_PINNEDPUBKEYNOTMATCH`.
    static let pinMismatch: Int32 = 90
    /// `CURLPAUSE_RECV`, `CURLPAUSE_SEND` and `CURLPAUSE_CONT` for `curl_easy_pause`.
    static let pauseReceiving: Int32 = 1
    static let pauseSending: Int32 = 4
    static let pauseNothing: Int32 = 0
    /// `CURL_READFUNC_ABORT`.
    static let readAbort = 0x1000_0000
    /// `CURL_READFUNC_PAUSE`: nothing to send yet; libcurl stops sending until `curl_easy_pause`.
    static let readPause = 0x1000_0001
    /// `CURL_WRITEFUNC_PAUSE`: libcurl keeps the bytes and stops reading until `curl_easy_pause`.
    static let writePause = 0x1000_0001
}
#endif
