import Foundation
import RoostCore

/// The MongoDB expression operators Parse's aggregation specs use, evaluated on wire-form values:
/// arithmetic (`$add $subtract $multiply $divide`) and date parts (`$year $month $dayOfMonth $hour $minute
/// $second $millisecond $dayOfWeek $dayOfYear`, in UTC, as MongoDB computes them). Any other operator object is
/// answered as written, as before.
enum AggregationExpression {
    static let operators: Set<String> = ["$add", "$subtract", "$multiply", "$divide", "$year", "$month", "$dayOfMonth",
                                         "$hour", "$minute", "$second", "$millisecond", "$dayOfWeek", "$dayOfYear"]

    /// The value of `{op: argument}`; `evaluate` reads the document for the arguments. Null when an argument is
    /// missing or of another type (MongoDB answers null for missing inputs).
    static func apply(_ op: String, _ argument: JSON, evaluate: (JSON) -> JSON) -> JSON {
        switch op {
        case "$add", "$subtract", "$multiply", "$divide":
            let values = (argument.arrayValue ?? [argument]).map(evaluate).map(\.numberValue)
            guard !values.isEmpty, let numbers = values as? [Double] else { return .null }
            switch op {
            case "$add": return .number(numbers.reduce(0, +))
            case "$multiply": return .number(numbers.reduce(1, *))
            case "$subtract": return numbers.count == 2 ? .number(numbers[0] - numbers[1]) : .null
            default: return numbers.count == 2 && numbers[1] != 0 ? .number(numbers[0] / numbers[1]) : .null
            }
        default:
            guard let date = date(evaluate(argument.arrayValue?.first ?? argument)) else { return .null }
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = TimeZone(identifier: "UTC")!
            let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .nanosecond, .weekday], from: date)
            let value: Int? = switch op {
            case "$year": parts.year
            case "$month": parts.month
            case "$dayOfMonth": parts.day
            case "$hour": parts.hour
            case "$minute": parts.minute
            case "$second": parts.second
            case "$millisecond": parts.nanosecond.map { Int((Double($0) / 1_000_000).rounded()) % 1000 }
            case "$dayOfWeek": parts.weekday  // 1 = Sunday, as MongoDB.
            default: calendar.ordinality(of: .day, in: .year, for: date)
            }
            return value.map { .number(Double($0)) } ?? .null
        }
    }

    /// A Date value (`{"__type": "Date"}`) or an ISO string (`createdAt`'s wire form).
    private static func date(_ value: JSON) -> Date? {
        let text = value["__type"] == "Date" ? value["iso"]?.stringValue : value.stringValue
        guard let text, let parsed = ParseDate(iso: text) else { return nil }
        return Date(timeIntervalSince1970: Double(parsed.millisecondsSince1970) / 1000)
    }
}
