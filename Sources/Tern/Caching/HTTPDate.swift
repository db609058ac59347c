import Foundation

/// HTTP dates (RFC 9110 §5.6.7), read by hand: `DateFormatter` costs tens of microseconds per
/// call on Linux, and the cache reads `Date`, `Expires` and `Last-Modified` on every stored response.
enum HTTPDate {
    /// The date in `text`, in any of the three forms a recipient must accept: IMF-fixdate
    /// (`Sun, 06 Nov 1994 08:49:37 GMT`), RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
    /// (`Sun Nov  6 08:49:37 1994`); nil for anything else.
    static func parse(_ text: String) -> Date? {
        var numbers: [Int] = []
        var month: Int?
        var time: (Int, Int, Int)?
        var zoneSeen = false
        for token in text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" }) {
            if token.contains(":") {
                let parts = token.split(separator: ":", omittingEmptySubsequences: false).map { Int($0) }
                guard time == nil, parts.count == 3, let hour = parts[0], let minute = parts[1], let second = parts[2],
                    (0..<24).contains(hour), (0..<60).contains(minute), (0...60).contains(second)
                else { return nil }
                time = (hour, minute, second)
            } else if let number = Int(token) {
                numbers.append(number)
            } else if let index = monthNames.firstIndex(of: token.lowercased()) {
                guard month == nil else { return nil }
                month = index + 1
            } else if token == "GMT" || token == "UTC" {
                zoneSeen = true
            } else if !weekdayNames.contains(where: { token.lowercased().hasPrefix($0) }) {
                return nil
            }
        }
        // The day comes before the year in all three forms; asctime alone has no zone.
        guard numbers.count == 2, let month, let (hour, minute, second) = time, zoneSeen || text.last?.isNumber == true
        else { return nil }
        let day = numbers[0]
        var year = numbers[1]
        // RFC 850's two-digit year: the century that puts it at most 50 years ahead.
        if year < 100 { year += year < 50 ? 2000 : 1900 }
        guard (1...31).contains(day), year >= 1900 else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hour * 3_600 + minute * 60 + second))
    }

    private static let monthNames = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let weekdayNames = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]

    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar (the civil-from-days
    /// algorithm run backwards: years counted from March, so the leap day ends a year).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
