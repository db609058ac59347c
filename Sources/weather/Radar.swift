import Foundation
import Tern

/// The rain radar: a long download (a 640 × 480 greyscale image, about 300 KB) shown with a
/// progress bar fed by `Request.onProgress`, saved to a file and previewed in text.
enum Radar {
    static let width = 640, height = 480

    /// The radar image as a binary PGM file: rain and snow around the cities whose weather says so,
    /// the same every run.
    static func image() -> Data {
        var pixels = [UInt8](repeating: 0, count: width * height)
        for city in WeatherData.cities
        where city.condition.contains("rain") || city.condition.contains("showers") || city.condition.contains("snow") {
            let x = Int((city.longitude - 73) / 62 * Double(width)), y = Int((54 - city.latitude) / 36 * Double(height))
            let radius = 18 + city.id.unicodeScalars.reduce(0) { $0 + Int($1.value) } % 14
            for dy in -radius...radius where (0..<height).contains(y + dy) {
                for dx in -radius...radius where (0..<width).contains(x + dx) {
                    let distance = Double(dx * dx + dy * dy) / Double(radius * radius)
                    guard distance < 1 else { continue }
                    let index = (y + dy) * width + x + dx
                    pixels[index] = UInt8(min(255, Int(pixels[index]) + Int(170 * (1 - distance))))
                }
            }
        }
        return Data("P5\n\(width) \(height)\n255\n".utf8) + Data(pixels)
    }

    /// The image's ETag on both servers: a resumed download continues only while it matches.
    static let etag = "\"radar-1\""

    /// `weather radar`: downloads the image to `file` with a progress bar, resumably — interrupt
    /// it (Ctrl-C) and run it again, and it continues from the bytes already on disk — then
    /// prints a preview.
    static func download(api: Client, to file: URL) async -> Int32 {
        let bar = ProgressBar(interactive: isatty(STDOUT_FILENO) == 1)
        let started = Date()
        var request = Request.download(
            "v1/radar", to: file, options: DownloadOptions(replacesExistingFile: true, isResumable: true),
            timeout: 60
        ).onProgress { bar.show($0) }
        request.group = WeatherAPI.group
        do {
            let saved = try await api.send(request).value
            bar.finish()
            guard let image = try? Data(contentsOf: saved.url), let pixels = pixels(of: image) else {
                print("Radar failed: the server sent a malformed image (\(saved.size) bytes).")
                return 1
            }
            let resumed = saved.resumedFrom > 0 ? ", resumed from \(saved.resumedFrom / 1024) KB" : ""
            print(
                String(
                    format: "Saved the radar image (%d × %d, %d KB%@) to %@ in %.1f s", width, height, image.count / 1024,
                    resumed, file.path, Date().timeIntervalSince(started)))
            print(preview(pixels))
            return 0
        } catch {
            bar.finish()
            print("Radar failed: \(WeatherApp.explain(error))")
            return 1
        }
    }

    /// The pixels of a PGM image of the expected size, or nil.
    private static func pixels(of image: Data) -> Data? {
        let header = Data("P5\n\(width) \(height)\n255\n".utf8)
        guard image.count == header.count + width * height, image.prefix(header.count) == header else { return nil }
        return image.dropFirst(header.count)
    }

    /// A 64 × 16 text rendering: each character is the mean of a block of pixels.
    private static func preview(_ pixels: Data) -> String {
        let shades = Array(" .:-=+*#%@"), columns = 64, rows = 16
        let blockWidth = width / columns, blockHeight = height / rows
        let base = pixels.startIndex
        return (0..<rows).map { row in
            "  |"
                + String(
                    (0..<columns).map { column -> Character in
                        var sum = 0
                        for y in row * blockHeight..<(row + 1) * blockHeight {
                            for x in column * blockWidth..<(column + 1) * blockWidth { sum += Int(pixels[base + y * width + x]) }
                        }
                        return shades[min(shades.count - 1, sum / (blockWidth * blockHeight) * shades.count / 128)]
                    }) + "|"
        }.joined(separator: "\n")
    }
}

/// Draws download progress: redrawn in place on a terminal, one line per tenth otherwise.
// Sendable: its state is only touched by progress callbacks, which Tern delivers one at a time
// for a request, and by `finish()`, which runs after the last of them.
final class ProgressBar: @unchecked Sendable {
    private let interactive: Bool
    private var lastTenth = -1
    private var drewInPlace = false

    init(interactive: Bool) {
        self.interactive = interactive
    }

    func show(_ progress: TransferProgress) {
        guard progress.direction == .download else { return }
        let fraction = progress.fractionCompleted ?? 0
        let filled = Int(fraction * 30)
        let line =
            "Radar [" + String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled) + "] "
            + String(
                format: "%3.0f%%  %d / %@ KB", fraction * 100, progress.completedBytes / 1024,
                progress.expectedBytes.map { String($0 / 1024) } ?? "?")
        if interactive {
            // Unbuffered, so the line shows before its newline (earlier lines ended in one, which
            // flushed them on a terminal).
            FileHandle.standardOutput.write(Data(("\r" + line).utf8))
            drewInPlace = true
        } else if Int(fraction * 10) > lastTenth {
            lastTenth = Int(fraction * 10)
            print(line)
        }
    }

    func finish() {
        if drewInPlace { print("") }
    }
}
