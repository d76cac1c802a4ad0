/// Why a JSON text was refused.
public struct JSONParseError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A human-readable reason, with the byte offset where parsing stopped.
    public let description: String
}

/// A strict RFC 8259 parser over UTF-8 bytes.
///
/// It refuses invalid UTF-8, control characters inside strings, trailing garbage, nesting deeper
/// than `maximumDepth` and more than `maximumValues` values in all, so hostile bodies fail fast
/// instead of exhausting the stack or the memory (a 20 MB body `[0,0,…]` is 10 million values,
/// ~600 MB as `JSON`).
public struct JSONParser {
    /// The deepest nesting of arrays and objects accepted.
    public static let defaultMaximumDepth = 64

    /// Parses one JSON value from `bytes`.
    /// - Throws: `JSONParseError` when the text is not exactly one valid JSON value.
    /// - Parameter maximumValues: the most values (each scalar, array and object counts one) accepted.
    public static func parse<Bytes: Collection>(_ bytes: Bytes, maximumDepth: Int = defaultMaximumDepth,
                                                maximumValues: Int = .max) throws -> JSON
    where Bytes.Element == UInt8 {
        let result = bytes.withContiguousStorageIfAvailable { buffer in
            Result { try parseBuffer(buffer, maximumDepth: maximumDepth, maximumValues: maximumValues) }
        }
        if let result { return try result.get() }
        let copy = Array(bytes)
        return try copy.withUnsafeBufferPointer { try parseBuffer($0, maximumDepth: maximumDepth, maximumValues: maximumValues) }
    }

    /// Parses one JSON value from a string.
    public static func parse(_ text: String, maximumDepth: Int = defaultMaximumDepth, maximumValues: Int = .max) throws -> JSON {
        var text = text
        return try text.withUTF8 { try parseBuffer($0, maximumDepth: maximumDepth, maximumValues: maximumValues) }
    }

    private static func parseBuffer(_ buffer: UnsafeBufferPointer<UInt8>, maximumDepth: Int, maximumValues: Int) throws -> JSON {
        var reader = Reader(bytes: buffer, maximumDepth: maximumDepth, maximumValues: maximumValues)
        reader.skipWhitespace()
        let value = try reader.readValue(depth: 0)
        reader.skipWhitespace()
        guard reader.isAtEnd else { throw reader.error("unexpected data after the JSON value") }
        return value
    }
}

private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maximumDepth: Int
    let maximumValues: Int
    /// Counts down: one counter per value is the whole cost of the bound.
    var valuesLeft: Int
    var index = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int, maximumValues: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.maximumValues = maximumValues
        valuesLeft = maximumValues
    }

    var isAtEnd: Bool { index >= bytes.count }

    func error(_ reason: String) -> JSONParseError {
        JSONParseError(description: "\(reason) at byte \(index)")
    }

    mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    mutating func readValue(depth: Int) throws -> JSON {
        guard index < bytes.count else { throw error("unexpected end of input") }
        valuesLeft -= 1
        guard valuesLeft >= 0 else { throw error("more than \(maximumValues) values") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try readObject(depth: depth + 1)
        case UInt8(ascii: "["): return try readArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try readNumber())
        default: throw error("unexpected character")
        }
    }

    mutating func expectLiteral(_ literal: StaticString) throws {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error("invalid literal") }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for offset in 0..<count where bytes[index + offset] != expected[offset] {
            throw error("invalid literal")
        }
        index += count
    }

    mutating func readObject(depth: Int) throws -> JSON {
        guard depth <= maximumDepth else { throw error("nesting deeper than \(maximumDepth) levels") }
        index += 1
        var members: [String: JSON] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try readString()
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            members[key] = try readValue(depth: depth)
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(members) }
            throw error("expected ',' or '}'")
        }
    }

    mutating func readArray(depth: Int) throws -> JSON {
        guard depth <= maximumDepth else { throw error("nesting deeper than \(maximumDepth) levels") }
        index += 1
        var elements: [JSON] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try readValue(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw error("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(elements) }
            throw error("expected ',' or ']'")
        }
    }

    mutating func readString() throws -> String {
        index += 1
        let start = index
        // Fast path: no escapes.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                guard let text = String(validating: slice, as: UTF8.self) else { throw error("invalid UTF-8 in string") }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character in string") }
            index += 1
        }
        var scratch = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: scratch, as: UTF8.self) else { throw error("invalid UTF-8 in string") }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                try readEscape(into: &scratch)
            case 0..<0x20:
                throw error("control character in string")
            default:
                scratch.append(byte)
                index += 1
            }
        }
        throw error("unterminated string")
    }

    mutating func readEscape(into scratch: inout [UInt8]) throws {
        guard index < bytes.count else { throw error("unterminated escape") }
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): scratch.append(0x22)
        case UInt8(ascii: "\\"): scratch.append(0x5C)
        case UInt8(ascii: "/"): scratch.append(0x2F)
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try readHex4()
            if (0xD800..<0xDC00).contains(scalar) {
                guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { throw error("unpaired surrogate") }
                index += 2
                let low = try readHex4()
                guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw error("unpaired surrogate")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw error("invalid escape") }
            scratch.append(contentsOf: Array(String(Character(unicode)).utf8))
        default:
            throw error("invalid escape")
        }
    }

    mutating func readHex4() throws -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("invalid \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw error("invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    mutating func readNumber() throws -> Double {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw error("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if isDigit(bytes[index]) {
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        } else {
            throw error("invalid number")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < bytes.count, isDigit(bytes[index]) else { throw error("invalid number") }
            while index < bytes.count, isDigit(bytes[index]) { index += 1 }
        }
        // Small integers (most numbers in requests) are exact in a Double: no text round trip.
        let digits = bytes[start] == UInt8(ascii: "-") ? index - start - 1 : index - start
        if digits <= 15, !bytes[start..<index].contains(where: { !isDigit($0) && $0 != UInt8(ascii: "-") }) {
            var value: Int64 = 0
            for byte in bytes[start..<index] where byte != UInt8(ascii: "-") { value = value * 10 + Int64(byte - 48) }
            return bytes[start] == UInt8(ascii: "-") ? -Double(value) : Double(value)
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { throw error("number out of range") }
        return value
    }

    func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
}
