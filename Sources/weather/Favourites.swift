import Foundation

/// The favourite cities, kept in a small JSON file in the user's data directory: on Linux
/// `$XDG_DATA_HOME/tern-weather`, else `~/.local/share/tern-weather`; on Apple platforms
/// `Application Support/tern-weather`; `--data-dir` overrides.
struct Favourites {
    let file: URL

    init(directory: URL?) {
        let base = directory ?? Self.defaultDirectory()
        file = base.appendingPathComponent("favourites.json")
    }

    private static func defaultDirectory() -> URL {
        #if canImport(Darwin)
        let support =
            FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent("Library/Application Support")
        return support.appendingPathComponent("tern-weather")
        #else
        let environment = ProcessInfo.processInfo.environment
        if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg).appendingPathComponent("tern-weather")
        }
        return URL(fileURLWithPath: NSHomeDirectory()).appendingPathComponent(".local/share/tern-weather")
        #endif
    }

    /// The saved ids, or the default favourites when nothing was saved yet.
    func load() -> [String] {
        guard let data = try? Data(contentsOf: file), let ids = try? JSONDecoder().decode([String].self, from: data) else {
            return WeatherData.defaultFavourites
        }
        return ids
    }

    func save(_ ids: [String]) throws {
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try JSONEncoder().encode(ids).write(to: file, options: .atomic)
    }
}
