import Foundation
import Testing
import Tern

/// The release a user installs is named the same everywhere: `Client.version` (which the default
/// `User-Agent` sends), the newest release in CHANGELOG.md and the README's install line.
@Suite struct PackageMetadataTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ name: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)
    }

    @Test func theChangelogsNewestReleaseIsTheLibraryVersion() throws {
        let releases = try Self.text("CHANGELOG.md").split(separator: "\n")
            .filter { $0.hasPrefix("## [") && !$0.hasPrefix("## [Unreleased]") }
        let newest = try #require(releases.first, "CHANGELOG.md names no release")
        #expect(newest.hasPrefix("## [\(Client.version)] - "), "\(newest)")
    }

    @Test func theReadmeInstallsThisVersion() throws {
        #expect(try Self.text("README.md").contains(#"from: "\#(Client.version)")"#))
    }

    @Test func theLicenseIsMIT() throws {
        let license = try Self.text("LICENSE")
        #expect(license.hasPrefix("MIT License") && license.contains("the Tern authors"))
    }
}
