import Foundation
import Testing

/// Every code sample of the documentation compiles: each ```swift block of the DocC articles
/// (`Sources/*/*.docc/*.md`) appears, indentation aside, in `ReadmeExamples.swift`, a file of
/// this folder or of `Tests/CoexistenceTests`, or `TestingGuideExamples.swift`, which the test
/// targets compile. A fragment of a user's `Package.swift` is exempt.
@Suite struct DocSamplesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The compiled sample code, normalized.
    static func compiledSamples() throws -> String {
        let tests = root.appendingPathComponent("Tests/TernTests")
        let folder = tests.appendingPathComponent("DocExamples")
        // The samples that import Tern beside stand-ins for Alamofire and Moya compile in their own target.
        let coexistence = root.appendingPathComponent("Tests/CoexistenceTests")
        let files =
            [tests.appendingPathComponent("ReadmeExamples.swift")]
            + (try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)).filter {
                $0.pathExtension == "swift"
            }
            + (try FileManager.default.contentsOfDirectory(at: coexistence, includingPropertiesForKeys: nil))
            + [root.appendingPathComponent("Tests/TernStubsTests/TestingGuideExamples.swift")]
        return try files.map { normalize(try String(contentsOf: $0, encoding: .utf8)) }.joined(separator: "\n")
    }

    /// The articles of every catalog.
    static func articles() throws -> [URL] {
        let sources = root.appendingPathComponent("Sources")
        var found: [URL] = []
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path) {
            let catalog = sources.appendingPathComponent(module).appendingPathComponent("\(module).docc")
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: catalog.path) else { continue }
            found += names.filter { $0.hasSuffix(".md") }.map { catalog.appendingPathComponent($0) }
        }
        return found
    }

    static func normalize(_ text: String) -> String {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            .joined(separator: "\n")
    }

    @Test func everyArticleSampleIsCompiled() throws {
        let compiled = try Self.compiledSamples()
        let articles = try Self.articles()
        #expect(articles.count >= 15, "the catalogs have \(articles.count) articles")
        var samples = 0
        for article in articles {
            let text = try String(contentsOf: article, encoding: .utf8)
            let blocks = text.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
            for block in blocks where !block.hasPrefix("// Package.swift\n") {
                samples += 1
                #expect(compiled.contains(Self.normalize(block)), "\(article.lastPathComponent): sample not compiled:\n\(block)")
            }
        }
        #expect(samples >= 30)
    }

    /// Samples fit the rendered page: no line of a catalog's code sample is wider than 100 columns.
    @Test func sampleLinesFitThePage() throws {
        for article in try Self.articles() {
            let text = try String(contentsOf: article, encoding: .utf8)
            let blocks = text.components(separatedBy: "```swift\n").dropFirst().map { $0.components(separatedBy: "```")[0] }
            for line in blocks.flatMap({ $0.split(separator: "\n") }) where line.count > 100 {
                Issue.record("\(article.lastPathComponent): a sample line of \(line.count) columns:\n\(line)")
            }
        }
    }

    /// The documentation speaks to users: no issue numbers, no internal words.
    @Test func theDocumentationSpeaksToUsers() throws {
        for article in try Self.articles() + [Self.root.appendingPathComponent("README.md")] {
            let text = try String(contentsOf: article, encoding: .utf8)
            for word in ["seed", "../shared", "LINUX-URLSESSION"] {
                #expect(!text.lowercased().contains(word.lowercased()), "\(article.lastPathComponent) says \(word)")
            }
            let issueNumber = text.range(of: #"(?<![\w&])#[0-9]{1,3}\b"#, options: .regularExpression)
            #expect(issueNumber == nil, "\(article.lastPathComponent) names an issue")
        }
    }
}
