import Foundation
import Testing

/// The library has one of each piece of machinery (`Sources/Tern/Internal/`): a second copy of
/// the same formula, written under another name, fails here with the file that has it.
@Suite struct OneOfEachTests {
    /// Each piece, the file that has it, and what its code looks like wherever it appears.
    static let pieces: [(piece: String, home: String, patterns: [String])] = [
        ("exponential backoff", "Internal/Backoff.swift", [#"pow\(2"#, #"\* 2 \*\*"#, #"<< attempt"#]),
        ("weak box", "Internal/Weak.swift", [#"weak var"#]),
        ("run-time library loader", "Internal/DynamicLibrary.swift", [#"\bdlopen\("#, #"\bdlsym\("#]),
        ("bounded async queue", "Internal/BackpressureQueue.swift", [#"CheckedContinuation<[A-Za-z.]+\?"#]),
        (
            "broadcaster", "Internal/Broadcast.swift",
            [#"\[UInt64: @Sendable \("#, #"\[UInt64: AsyncStream<"#, #"\.Continuation\] = \[:\]"#]
        ),
    ]

    /// Structs that hold one weak reference of their own (checked by the compiler as `Sendable`,
    /// no box): allowed beside `Weak`.
    static let allowedWeakStructs = ["Transport/Curl/CurlTransport.swift"]

    /// `@unchecked Sendable` is where the compiler stops checking: few of them, each saying why
    /// it is safe in a `// Sendable:` comment above it.
    @Test func fewTypesAreUncheckedAndEachSaysWhy() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        var count = 0
        for module in ["Tern", "TernCache", "TernStubs"] {
            let folder = root.appendingPathComponent("Sources/\(module)")
            for file in try FileManager.default.subpathsOfDirectory(atPath: folder.path) where file.hasSuffix(".swift") {
                let lines = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
                    .split(separator: "\n", omittingEmptySubsequences: false)
                for (number, line) in lines.enumerated() where line.contains("@unchecked Sendable") && !line.contains("//") {
                    count += 1
                    // The comment block above it, past its attributes.
                    let above = lines[..<number].reversed().drop { $0.trimmingCharacters(in: .whitespaces).hasPrefix("@") }
                        .prefix { $0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
                    #expect(above.contains { $0.contains("Sendable:") }, "\(module)/\(file):\(number + 1) says not why it is safe")
                }
            }
        }
        #expect(count <= 35, "\(count) @unchecked Sendable declarations")
    }

    @Test func eachPieceOfMachineryIsWrittenOnce() throws {
        let sources = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Sources/Tern")
        let files = try FileManager.default.subpathsOfDirectory(atPath: sources.path).filter { $0.hasSuffix(".swift") }
        #expect(files.count > 100)
        for (piece, home, patterns) in Self.pieces {
            #expect(files.contains(home), "\(home) is gone")
            for file in files where file != home {
                if piece == "weak box", Self.allowedWeakStructs.contains(file) { continue }
                let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
                let code = text.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).hasPrefix("//") }
                    .joined(separator: "\n")
                for pattern in patterns where code.range(of: pattern, options: .regularExpression) != nil {
                    Issue.record("\(file) has its own \(piece) (`\(pattern)`): use \(home)")
                }
            }
        }
    }
}
