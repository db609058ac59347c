import Foundation
import Testing

@testable import Tern

/// Decodes `json` as `T` with `JSONDecoder` (set up by `configure`) and with Tern's decoder under
/// the same settings, and expects the same value or the same error: its case, type or key, and
/// coding path (a `dataCorrupted` error's description may differ for invalid JSON).
func expectSameDecoding<T: Decodable & Equatable>(
    _ type: T.Type, _ json: String, configure: (JSONDecoder) -> Void = { _ in },
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let reference = JSONDecoder()
    configure(reference)
    let data = Data(json.utf8)
    let expected = Result { try reference.decode(T.self, from: data) }
    guard let options = DecodingOptions(reference) else {
        Issue.record("Tern's decoder refused the settings", sourceLocation: sourceLocation)
        return
    }
    let actual = Result { try TapeDecoder.decode(T.self, from: data, options: options) }
    switch (expected, actual) {
    case (.success(let want), .success(let got)):
        #expect(got == want, "\(json)", sourceLocation: sourceLocation)
    case (.failure(let want), .failure(let got)):
        #expect(DecodingErrorShape(got) == DecodingErrorShape(want), "\(json)", sourceLocation: sourceLocation)
    case (.success(let want), .failure(let got)):
        Issue.record("JSONDecoder decoded \(want) from \(json); Tern threw \(got)", sourceLocation: sourceLocation)
    case (.failure(let want), .success(let got)):
        Issue.record("JSONDecoder threw \(want) for \(json); Tern decoded \(got)", sourceLocation: sourceLocation)
    }
}

/// What two decoding errors must share: the case, the type or key it names, the coding path.
struct DecodingErrorShape: Equatable, CustomStringConvertible {
    let kind: String
    let subject: String
    let path: [String]

    init(_ error: any Error) {
        func keys(_ context: DecodingError.Context) -> [String] {
            context.codingPath.map { key in key.intValue.map { "\(key.stringValue)#\($0)" } ?? key.stringValue }
        }
        switch error as? DecodingError {
        case .typeMismatch(let type, let context): (kind, subject, path) = ("typeMismatch", "\(type)", keys(context))
        case .valueNotFound(let type, let context): (kind, subject, path) = ("valueNotFound", "\(type)", keys(context))
        case .keyNotFound(let key, let context): (kind, subject, path) = ("keyNotFound", key.stringValue, keys(context))
        case .dataCorrupted(let context): (kind, subject, path) = ("dataCorrupted", "", keys(context))
        default: (kind, subject, path) = ("not a DecodingError", "\(error)", [])
        }
    }

    var description: String { "\(kind)(\(subject)) at \(path)" }
}
