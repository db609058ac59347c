// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "Tern",
    platforms: [.macOS(.v10_15), .iOS(.v13), .tvOS(.v13), .watchOS(.v6)],
    products: [
        .library(name: "Tern", targets: ["Tern"]),
        .library(name: "TernStubs", targets: ["TernStubs"]),
        .executable(name: "weather", targets: ["weather"]),
        .executable(name: "tern-bench", targets: ["tern-bench"]),
    ],
    targets: [
        .target(name: "Tern"),
        .target(name: "TernStubs", dependencies: ["Tern"]),
        .executableTarget(name: "weather", dependencies: ["Tern", "TernStubs"]),
        .executableTarget(name: "tern-bench", dependencies: ["Tern"]),
        .testTarget(name: "TernTests", dependencies: ["Tern", "TernStubs"]),
        .testTarget(name: "TernStubsTests", dependencies: ["Tern", "TernStubs"]),
    ]
)
