#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A point in time with millisecond precision, written as Parse writes dates:
/// ISO 8601 in UTC with exactly three fraction digits (`2026-11-22T10:00:00.000Z`).
public struct ParseDate: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public let millisecondsSince1970: Int64

    public init(millisecondsSince1970: Int64) { self.millisecondsSince1970 = millisecondsSince1970 }

    /// The current time, from the system's real-time clock.
    public static func now() -> ParseDate {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return ParseDate(millisecondsSince1970: Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000)
    }

    public static func < (lhs: ParseDate, rhs: ParseDate) -> Bool { lhs.millisecondsSince1970 < rhs.millisecondsSince1970 }

    /// The ISO 8601 form, e.g. `2026-11-22T10:00:00.000Z`.
    public var iso: String {
        let parts = self.parts
        if (0...9999).contains(parts.year) {
            return String(unsafeUninitializedCapacity: 24) { ParseDate.writeFixedWidth(parts, into: $0) }
        }
        return pad(parts.year, 4) + "-" + pad(parts.month, 2) + "-" + pad(parts.day, 2) + "T" + pad(parts.hour, 2) + ":"
            + pad(parts.minute, 2) + ":" + pad(parts.second, 2) + "." + pad(parts.millisecond, 3) + "Z"
    }

    /// Appends `"<iso>"`, quoted as a JSON string: replies carry two dates per object, written straight
    /// into the reply's bytes.
    public func appendQuotedISO(to output: inout [UInt8]) {
        let parts = self.parts
        guard (0...9999).contains(parts.year) else { return JSON.writeString(iso, to: &output) }
        let start = output.count
        output.append(contentsOf: repeatElement(UInt8(ascii: "\""), count: 26))
        output.withUnsafeMutableBufferPointer { buffer in
            _ = ParseDate.writeFixedWidth(parts, into: UnsafeMutableBufferPointer(rebasing: buffer[(start + 1)..<(start + 25)]))
        }
    }

    private typealias Parts = (year: Int64, month: Int64, day: Int64, hour: Int64, minute: Int64, second: Int64, millisecond: Int64)

    private var parts: Parts {
        let days = floorDivide(millisecondsSince1970, 86_400_000)
        let msOfDay = millisecondsSince1970 - days * 86_400_000
        let (year, month, day) = ParseDate.civil(fromDays: days)
        return (year, month, day, msOfDay / 3_600_000, msOfDay / 60_000 % 60, msOfDay / 1000 % 60, msOfDay % 1000)
    }

    /// Writes the 24 bytes of a date whose year has four digits; returns 24.
    private static func writeFixedWidth(_ parts: Parts, into buffer: UnsafeMutableBufferPointer<UInt8>) -> Int {
        var index = 0
        func put(_ value: Int64, _ width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                buffer[index] = UInt8(48 + value / divisor % 10)
                index += 1
                divisor /= 10
            }
        }
        func put(_ character: Unicode.Scalar) {
            buffer[index] = UInt8(ascii: character)
            index += 1
        }
        put(parts.year, 4); put("-"); put(parts.month, 2); put("-"); put(parts.day, 2); put("T")
        put(parts.hour, 2); put(":"); put(parts.minute, 2); put(":"); put(parts.second, 2); put(".")
        put(parts.millisecond, 3); put("Z")
        return index
    }

    public var description: String { iso }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff…](Z|±HH:MM)`; a date alone (`YYYY-MM-DD`) means midnight UTC.
    public init?(iso text: String) {
        let bytes = Array(text.utf8)
        var index = 0
        func number(_ width: Int) -> Int64? {
            guard index + width <= bytes.count else { return nil }
            var value: Int64 = 0
            for byte in bytes[index..<index + width] {
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            index += width
            return value
        }
        func expect(_ character: Character) -> Bool {
            guard index < bytes.count, bytes[index] == character.asciiValue! else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect("-"), let month = number(2), expect("-"), let day = number(2),
            (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        var ms: Int64 = 0
        var offsetMinutes: Int64 = 0
        if index < bytes.count {
            guard expect("T") || expect(" "), let hour = number(2), expect(":"), let minute = number(2),
                hour < 24, minute < 60
            else { return nil }
            var second: Int64 = 0
            if expect(":") {
                guard let value = number(2), value < 61 else { return nil }
                second = value
                if expect(".") {
                    var digits = 0
                    var fraction: Int64 = 0
                    while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                        if digits < 3 { fraction = fraction * 10 + Int64(bytes[index] - 48) }
                        digits += 1
                        index += 1
                    }
                    guard digits > 0 else { return nil }
                    for _ in digits..<max(digits, 3) { fraction *= 10 }
                    ms = fraction
                }
            }
            ms += ((hour * 60 + minute) * 60 + second) * 1000
            if expect("Z") {
            } else if index < bytes.count, bytes[index] == 43 || bytes[index] == 45 {
                let sign: Int64 = bytes[index] == 45 ? -1 : 1
                index += 1
                guard let offsetHours = number(2) else { return nil }
                _ = expect(":")
                guard let offsetMins = number(2) else { return nil }
                offsetMinutes = sign * (offsetHours * 60 + offsetMins)
            } else {
                return nil
            }
            guard index == bytes.count else { return nil }
        }
        let days = ParseDate.days(fromCivil: year, month, day)
        self.millisecondsSince1970 = days * 86_400_000 + ms - offsetMinutes * 60_000
    }

    // Howard Hinnant's civil-from-days algorithms (public domain).
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = floorDivide(y, 400)
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = floorDivide(z, 146_097)
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

private func floorDivide(_ a: Int64, _ b: Int64) -> Int64 {
    let quotient = a / b
    return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
}

private func pad(_ value: Int64, _ width: Int) -> String {
    let digits = String(value)
    return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
}
