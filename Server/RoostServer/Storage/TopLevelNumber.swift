import Foundation
import RoostCore

/// `roost_number(data, 'key')`: what `json_extract(data, '$.key')` answers for a Number field, read without parsing the
/// whole object: the top-level members are skipped over until `key`, whose number is read in place.
///
/// A scan of an unindexed Number field calls it on every row (filter and order), where SQLite 3.40's `json_extract` parses
/// the whole object each time. The query compiler uses it only for fields no index covers (an index on it would not
/// match `json_extract`, which every index is built on). Anything but a number or null at `key` (never in a Number
/// field, whose writes are type-checked) goes through the full parser and answers as `json_extract` does.
enum TopLevelNumber {
    enum Value: Equatable {
        case integer(Int64)
        case real(Double)
        case null
        /// Not a number: the caller reads it the slow way.
        case other
    }

    static func value(in text: UnsafeBufferPointer<UInt8>, key: UnsafeBufferPointer<UInt8>) -> Value {
        var scanner = Scanner(bytes: text)
        scanner.skipSpace()
        guard scanner.take(UInt8(ascii: "{")) else { return .other }
        while true {
            scanner.skipSpace()
            if scanner.take(UInt8(ascii: "}")) { return .null }
            guard let name = scanner.string() else { return .other }
            scanner.skipSpace()
            guard scanner.take(UInt8(ascii: ":")) else { return .other }
            scanner.skipSpace()
            if name.escaped == false, name.range.count == key.count,
               name.range.indices.allSatisfy({ text[$0] == key[$0 - name.range.lowerBound] }) {
                return scanner.number() ?? (scanner.literal("null") ? .null : .other)
            }
            guard scanner.skipValue() else { return .other }
            scanner.skipSpace()
            if scanner.take(UInt8(ascii: ",")) { continue }
            return scanner.take(UInt8(ascii: "}")) ? .null : .other
        }
    }

    /// The slow way, for `.other`: the member as `json_extract` answers it.
    static func extracted(_ text: String, key: String) -> SQLValue {
        guard let document = try? JSONParser.parse(text), let member = document[key] else { return .null }
        switch member {
        case .null: return .null
        case .bool(let flag): return .integer(flag ? 1 : 0)
        case .number(let number): return .real(number)
        case .string(let string): return .text(string)
        default: return .text(member.jsonText)
        }
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        mutating func skipSpace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x0A || bytes[index] == 0x0D || bytes[index] == 0x09 {
                index += 1
            }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let count = word.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            for offset in 0..<count where bytes[index + offset] != word.utf8Start[offset] { return false }
            index += count
            return true
        }

        /// A string's contents (without the quotes); `escaped` when it holds a backslash.
        mutating func string() -> (range: Range<Int>, escaped: Bool)? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            var escaped = false
            while index < bytes.count {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    index += 1
                    return (start..<(index - 1), escaped)
                case UInt8(ascii: "\\"):
                    escaped = true
                    index += 2
                default:
                    index += 1
                }
            }
            return nil
        }

        /// A JSON number: an integer as SQLite reads one (Int64 when it fits), else a real (`strtod`, as SQLite's
        /// JSON reader: the text is NUL-terminated, as `sqlite3_value_text` gives it).
        mutating func number() -> Value? {
            let start = index
            var integral = true
            while index < bytes.count, isNumberByte(bytes[index]) {
                if bytes[index] == UInt8(ascii: ".") || bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") { integral = false }
                index += 1
            }
            guard index > start, bytes[start] == UInt8(ascii: "-") || isDigit(bytes[start]) else {
                index = start
                return nil
            }
            if integral {
                var value: Int64 = 0
                let negative = bytes[start] == UInt8(ascii: "-")
                var fits = true
                for position in (negative ? start + 1 : start)..<index {
                    guard isDigit(bytes[position]) else { return nil }
                    let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
                    let digit = Int64(bytes[position] - 0x30)
                    let (sum, overflowSum) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
                    if overflowTimes || overflowSum { fits = false; break }
                    value = sum
                }
                if fits { return .integer(value) }
            }
            guard let base = bytes.baseAddress else { return nil }
            return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) { .real(strtod($0 + start, nil)) }
        }

        private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

        private func isNumberByte(_ byte: UInt8) -> Bool {
            isDigit(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".")
                || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
        }

        /// Skips one value of any kind; false when the text is not JSON.
        mutating func skipValue() -> Bool {
            guard index < bytes.count else { return false }
            switch bytes[index] {
            case UInt8(ascii: "\""): return string() != nil
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                var depth = 0
                while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: "\""):
                        guard string() != nil else { return false }
                        continue
                    case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                    case UInt8(ascii: "}"), UInt8(ascii: "]"):
                        depth -= 1
                        if depth == 0 {
                            index += 1
                            return true
                        }
                    default: break
                    }
                    index += 1
                }
                return false
            default:
                let start = index
                scan: while index < bytes.count {
                    switch bytes[index] {
                    case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x0A, 0x0D, 0x09: break scan
                    default: index += 1
                    }
                }
                return index > start
            }
        }
    }
}
