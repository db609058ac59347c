import Foundation

/// One metric of one workload, measured for both implementations over the rounds.
struct Entry {
    let workload: String
    let metric: String
    /// "higher" or "lower": which direction is better for this metric.
    let better: String
    var tern: [Double] = []
    var baseline: [Double] = []

    /// Tern's median over URLSession's median: above 1 is better for "higher" metrics,
    /// below 1 for "lower" ones.
    var ratio: Double { tern.median / baseline.median }

    /// The median of the per-round ratios: each round's pair ran back to back, so machine drift cancels.
    var pairedRatio: Double { zip(tern, baseline).map { $0 / $1 }.median }
}

enum Report {
    static func json(_ entries: [Entry]) -> String {
        entries.map { entry in
            let fields: [(String, String)] = [
                ("workload", quoted(entry.workload)), ("metric", quoted(entry.metric)),
                ("tern", number(entry.tern.median)), ("baseline", number(entry.baseline.median)),
                ("ratio", number(entry.ratio)), ("rounds", "\(entry.tern.count)"), ("better", quoted(entry.better)),
                ("paired_ratio", number(entry.pairedRatio)),
                ("tern_min", number(entry.tern.min() ?? .nan)), ("tern_max", number(entry.tern.max() ?? .nan)),
                ("baseline_min", number(entry.baseline.min() ?? .nan)), ("baseline_max", number(entry.baseline.max() ?? .nan)),
            ]
            return "{" + fields.map { "\"\($0.0)\": \($0.1)" }.joined(separator: ", ") + "}"
        }.joined(separator: "\n")
    }

    /// The entries as a table; `baseline` names the other column's contender.
    static func table(_ entries: [Entry], baseline: String = "urlsession") -> String {
        var lines = [row("workload", "metric", "tern: median (min–max)", "\(baseline): median (min–max)", "ratio", "paired", "better")]
        for entry in entries {
            lines.append(
                row(
                    entry.workload, entry.metric, spread(entry.tern), spread(entry.baseline),
                    String(format: "%.3f", entry.ratio), String(format: "%.3f", entry.pairedRatio), entry.better))
        }
        return lines.joined(separator: "\n")
    }

    private static func row(_ columns: String...) -> String {
        let widths = [14, 15, 28, 30, 7, 7, 6]
        return zip(columns, widths).map { $0.padding(toLength: max($1, $0.count), withPad: " ", startingAt: 0) }.joined(separator: " ")
    }

    private static func spread(_ values: [Double]) -> String {
        "\(short(values.median)) (\(short(values.min() ?? .nan))–\(short(values.max() ?? .nan)))"
    }

    private static func short(_ value: Double) -> String {
        value >= 100 ? String(format: "%.0f", value) : String(format: "%.2f", value)
    }

    private static func number(_ value: Double) -> String {
        value.isFinite ? String(format: "%.4f", value) : "null"
    }

    private static func quoted(_ text: String) -> String { "\"\(text)\"" }
}
