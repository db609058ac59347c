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
struct LibCurl: Sendable {
    typealias Handle = UnsafeMutableRawPointer

    let version: String
    let versionNumber: UInt32
    /// Whether this libcurl was built with zstd: it then decodes `Content-Encoding: zstd`.
    let decodesZstd: Bool
    /// The variadic ones, called through `CTernCurl`.
    private let easySetopt: DynamicLibrary.UntypedFunction
    private let easyGetinfo: DynamicLibrary.UntypedFunction
    private let multiSetopt: DynamicLibrary.UntypedFunction
    private let multiFdset: DynamicLibrary.UntypedFunction
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
    static let loaded: Result<LibCurl, DynamicLibrary.LoadError> = Result { () throws(DynamicLibrary.LoadError) in
        // TERN_LIBCURL names another build (a newer libcurl, say), or hides it ("none").
        let names = ProcessInfo.processInfo.environment["TERN_LIBCURL"].map { [$0] } ?? ["libcurl.so.4", "libcurl.so"]
        return try LibCurl(DynamicLibrary(names))
    }

    private init(_ library: DynamicLibrary) throws(DynamicLibrary.LoadError) {
        typealias VersionInfo = @convention(c) (Int32) -> UnsafeRawPointer?
        // curl_version_info_data: age (int), version (char *), version_num (unsigned int), …
        guard let info = try library.function("curl_version_info", as: VersionInfo.self)(0) else {
            throw DynamicLibrary.LoadError(description: "curl_version_info returned nothing")
        }
        version = info.load(fromByteOffset: 8, as: UnsafePointer<CChar>?.self).map { String(cString: $0) } ?? "?"
        versionNumber = info.load(fromByteOffset: 16, as: UInt32.self)
        // … host (char *), features (int): CURL_VERSION_ZSTD is bit 26.
        decodesZstd = info.load(fromByteOffset: 32, as: Int32.self) & (1 << 26) != 0
        guard versionNumber >= Self.minimumVersion else {
            throw DynamicLibrary.LoadError(description: "libcurl \(version) is older than 7.68.0")
        }
        easySetopt = try library.function("curl_easy_setopt")
        easyGetinfo = try library.function("curl_easy_getinfo")
        multiSetopt = try library.function("curl_multi_setopt")
        multiFdset = try library.function("curl_multi_fdset")
        easyInit = try library.function("curl_easy_init")
        easyCleanup = try library.function("curl_easy_cleanup")
        easyReset = try library.function("curl_easy_reset")
        easyStrerror = try library.function("curl_easy_strerror")
        easyPause = try library.function("curl_easy_pause")
        multiInit = try library.function("curl_multi_init")
        multiCleanup = try library.function("curl_multi_cleanup")
        multiAddHandle = try library.function("curl_multi_add_handle")
        multiRemoveHandle = try library.function("curl_multi_remove_handle")
        multiPerform = try library.function("curl_multi_perform")
        multiPoll = try library.function("curl_multi_poll")
        multiTimeout = try library.function("curl_multi_timeout")
        multiInfoRead = try library.function("curl_multi_info_read")
        slistAppend = try library.function("curl_slist_append")
        slistFreeAll = try library.function("curl_slist_free_all")
        multiSocketAction = try library.function("curl_multi_socket_action")
        easySend = try library.function("curl_easy_send")
        easyRecv = try library.function("curl_easy_recv")
        // Thread-safe and reference-counted with FoundationNetworking's own call on 7.84+ builds.
        guard try library.function("curl_global_init", as: (@convention(c) (Int) -> Int32).self)(3) == 0 else {
            throw DynamicLibrary.LoadError(description: "curl_global_init failed")
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
