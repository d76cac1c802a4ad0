/// `{"$relativeTime": "in 1 day"}` in a Date comparison, read word for word as Parse Server's
/// `Utils.relativeTimeToDate` reads it: `in <n> <unit> …`, `<n> <unit> … ago`, or `now`.
public enum RelativeTime {
    /// The moment `text` names, counted from `now`; on failure, Parse's explanation (its `info`).
    public static func resolve(_ text: String, now: ParseDate) -> Result<ParseDate, Failure> {
        let lowered = text.lowercased()
        var parts = lowered.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let future = parts.first == "in"
        let past = parts.last == "ago"
        if !future && !past && lowered != "now" {
            return .failure(Failure("Time should either start with 'in' or end with 'ago'"))
        }
        if future && past { return .failure(Failure("Time cannot have both 'in' and 'ago'")) }
        if future { parts.removeFirst() } else if !parts.isEmpty { parts.removeLast() }
        if parts.count % 2 != 0 && lowered != "now" {
            return .failure(Failure("Invalid time string. Dangling unit or number."))
        }
        var seconds: Int64 = 0
        var index = 0
        while index + 1 < parts.count {
            let number = parts[index], unit = parts[index + 1]
            index += 2
            // JavaScript's Number() then Number.isInteger: `5`, `+5`, `5.0` and `1e3` are integers.
            guard let double = Double(number), double.isFinite, double.rounded() == double, abs(double) < 1e15 else {
                return .failure(Failure("'\(number)' is not an integer."))
            }
            let value = Int64(double)
            guard let unitSeconds = unitSeconds[unit] else { return .failure(Failure("Invalid interval: '\(unit)'")) }
            let (product, overflow) = value.multipliedReportingOverflow(by: unitSeconds)
            let (sum, overflowed) = seconds.addingReportingOverflow(product)
            guard !overflow, !overflowed, abs(sum) < 1 << 40 else {
                return .failure(Failure("'\(number)' is not an integer."))
            }
            seconds = sum
        }
        let milliseconds = seconds * 1000
        return .success(ParseDate(millisecondsSince1970: now.millisecondsSince1970 + (past ? -milliseconds : milliseconds)))
    }

    /// Why a relative time names no moment.
    public struct Failure: Error, Equatable {
        public let info: String
        init(_ info: String) { self.info = info }
    }

    private static let unitSeconds: [String: Int64] = {
        var table: [String: Int64] = [:]
        for (names, seconds) in [(["yr", "yrs", "year", "years"], 31_536_000), (["wk", "wks", "week", "weeks"], 604_800),
                                 (["d", "day", "days"], 86_400), (["hr", "hrs", "hour", "hours"], 3_600),
                                 (["min", "mins", "minute", "minutes"], 60), (["sec", "secs", "second", "seconds"], 1)] as [([String], Int64)] {
            for name in names { table[name] = seconds }
        }
        return table
    }()
}

extension RelativeTime {
    /// The `$relativeTime` of an operand `{"$relativeTime": …}`, when it is there and truthy in JavaScript's sense
    /// (Parse tests `val.$relativeTime`; a falsy one leaves the operand an ordinary value).
    public static func operand(_ value: JSON) -> JSON? {
        guard case .object(let members) = value, let relative = members["$relativeTime"], JavaScriptString.isTruthy(relative) else { return nil }
        return relative
    }

    public static let onlyComparisons = "$relativeTime can only be used with the $lt, $lte, $gt, and $gte operators"
    public static let onlyDates = "$relativeTime can only be used with Date field"
}
