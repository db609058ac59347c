// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Tern",
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6)],
    products: [
        .library(name: "Tern", targets: ["Tern"]),
        .library(name: "TernStubs", targets: ["TernStubs"]),
        .library(name: "TernCache", targets: ["TernCache"]),
        .executable(name: "weather", targets: ["weather"]),
        .executable(name: "tern-bench", targets: ["tern-bench"]),
    ],
    targets: [
        .target(name: "Tern", dependencies: ["TernCache", .target(name: "CTernCurl", condition: .when(platforms: [.linux, .android]))]),
        // Four calls into libcurl's variadic functions, which Swift cannot make; libcurl itself is
        // loaded at run time (no headers or development package needed).
        .target(name: "CTernCurl"),
        // SQLite is the SDK's on Apple platforms and loaded at run time elsewhere (libsqlite3.so.0):
        // no headers or development package needed.
        .target(name: "TernCache"),
        .target(name: "TernStubs", dependencies: ["Tern"]),
        .executableTarget(name: "weather", dependencies: ["Tern", "TernStubs"]),
        .executableTarget(name: "tern-bench", dependencies: ["Tern", "TernCache", "TernChildProcess"]),
        // Child processes for the tests and tern-bench, without Foundation's `Process` (on Linux
        // it crashes at random while starting one); not a product.
        .target(name: "TernChildProcess"),
        // Many requests with redirects, faults and random cancels: survives, each ends exactly once.
        .executableTarget(name: "tern-soak", dependencies: ["Tern"]),
        // Writes to a disk cache until killed: the crash-safety tests kill it at random moments.
        .executableTarget(name: "tern-cache-writer", dependencies: ["TernCache"]),
        // Enqueues writes in an outbox until killed: the outbox crash tests kill it at random
        // moments and count the effects on the fixture server.
        .executableTarget(name: "tern-outbox-writer", dependencies: ["Tern"]),
        // Downloads and uploads from the command line: the resume tests kill it mid-download and
        // run it again; the large-transfer tests measure its memory on its own.
        .executableTarget(name: "tern-transfer", dependencies: ["Tern"]),
        .testTarget(name: "TernTests", dependencies: ["Tern", "TernStubs", "TernCache", "TernChildProcess"]),
        .testTarget(name: "TernStubsTests", dependencies: ["Tern", "TernStubs"]),
        .testTarget(name: "TernCacheTests", dependencies: ["TernCache", "TernChildProcess"]),
        // Stand-ins that declare the names Alamofire and Moya share with Tern: a file importing
        // them beside Tern compiles as the migration guide shows. Test support, not products.
        .target(name: "AlamofireNames", path: "Tests/StandIns/AlamofireNames"),
        .target(name: "MoyaNames", path: "Tests/StandIns/MoyaNames"),
        .testTarget(name: "CoexistenceTests", dependencies: ["Tern", "TernStubs", "AlamofireNames", "MoyaNames"]),
    ]
)
