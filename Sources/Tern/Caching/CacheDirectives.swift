import Foundation

/// The `Cache-Control` directives (RFC 9111 §5.2) a private cache acts on, read from a request or
/// a response. Directives meant for shared caches only (`s-maxage`, `proxy-revalidate`, `public`)
/// and ones that change nothing here (`private`, `immutable`, `no-transform`) are skipped.
/// Thread safety: a value type, safe to share.
struct CacheDirectives: Sendable, Equatable {
    /// `max-age`: a response's freshness lifetime; a request's oldest acceptable age. A value that
    /// is not a number is kept as 0 (RFC 9111 §4.2.1: treat invalid freshness as stale).
    var maxAge: TimeInterval?
    /// `no-cache`: never use a stored response without revalidating it (a response's field-named
    /// form is taken as the unqualified one, as RFC 9111 §5.2.2.4 allows).
    var noCache = false
    /// `no-store`: never store the response.
    var noStore = false
    /// `must-revalidate` (response): once stale, never used without revalidation.
    var mustRevalidate = false
    /// `max-stale` (request): staleness the client accepts; `.infinity` when it names no limit.
    var maxStale: TimeInterval?
    /// `min-fresh` (request): seconds a response must stay fresh.
    var minFresh: TimeInterval?
    /// `only-if-cached` (request): answer from the cache or not at all.
    var onlyIfCached = false
    /// `stale-while-revalidate` (response, RFC 5861): seconds of staleness answered at once while
    /// one revalidation runs in the background.
    var staleWhileRevalidate: TimeInterval?
    /// `stale-if-error` (RFC 5861): seconds of staleness a stored response may answer with when the
    /// server fails (5xx) or cannot be reached.
    var staleIfError: TimeInterval?

    /// No directive.
    static let none = CacheDirectives()

    /// The directives in a `Cache-Control` value; the first of a repeated one counts.
    init(_ value: String?) {
        guard let value else { return }
        var seen = Set<String>()
        for (name, argument) in Self.split(value) where seen.insert(name).inserted {
            switch name {
            case "max-age": maxAge = Self.seconds(argument) ?? 0
            case "no-cache": noCache = true
            case "no-store": noStore = true
            case "must-revalidate": mustRevalidate = true
            case "max-stale": maxStale = argument.map { Self.seconds($0) ?? 0 } ?? .infinity
            case "min-fresh": minFresh = Self.seconds(argument) ?? 0
            case "only-if-cached": onlyIfCached = true
            case "stale-while-revalidate": staleWhileRevalidate = Self.seconds(argument)
            case "stale-if-error": staleIfError = Self.seconds(argument)
            default: break
            }
        }
    }

    private init() {}

    /// Delta-seconds (RFC 9111 §1.2.2): digits only; a value past 2³¹ counts as 2³¹.
    static func seconds(_ text: String?) -> TimeInterval? {
        guard let text, !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return min(TimeInterval(text) ?? .infinity, 2_147_483_648)
    }

    /// The value's directives, lower-cased, with their arguments unquoted: commas inside a
    /// quoted string do not split.
    private static func split(_ value: String) -> [(String, String?)] {
        var directives: [(String, String?)] = []
        var current = ""
        var quoted = false
        var escaped = false
        func flush() {
            let item = current.trimmingCharacters(in: .whitespaces)
            current = ""
            guard !item.isEmpty else { return }
            guard let equals = item.firstIndex(of: "=") else { return directives.append((item.lowercased(), nil)) }
            var argument = item[item.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            if argument.count >= 2, argument.hasPrefix("\""), argument.hasSuffix("\"") {
                argument = String(argument.dropFirst().dropLast()).replacingOccurrences(of: "\\", with: "")
            }
            directives.append((item[..<equals].trimmingCharacters(in: .whitespaces).lowercased(), argument))
        }
        for character in value {
            if escaped {
                escaped = false
            } else if quoted && character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == ",", !quoted {
                flush()
                continue
            }
            current.append(character)
        }
        flush()
        return directives
    }
}
