extension JSON {
    /// The compact UTF-8 JSON text of this value. Object members are written in key order,
    /// so equal values always produce equal bytes (useful for storage and comparisons).
    public func encoded() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(128)
        write(to: &output)
        return output
    }

    /// The compact JSON text of this value, as a `String`.
    public var jsonText: String { String(decoding: encoded(), as: UTF8.self) }

    /// Appends the compact JSON text of this value to `output`.
    public func write(to output: inout [UInt8]) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .number(let value): JSON.writeNumber(value, to: &output)
        case .string(let value): JSON.writeString(value, to: &output)
        case .encodedFragment(let bytes): output.append(contentsOf: bytes)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (offset, element) in elements.enumerated() {
                if offset > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            var first = true
            for (key, value) in members.sorted(by: { $0.key < $1.key }) {
                if !first { output.append(UInt8(ascii: ",")) }
                first = false
                JSON.writeString(key, to: &output)
                output.append(UInt8(ascii: ":"))
                value.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    public static func writeNumber(_ value: Double, to output: inout [UInt8]) {
        guard value.isFinite else {
            output.append(contentsOf: "null".utf8)
            return
        }
        if value == value.rounded(.towardZero), abs(value) < 9_007_199_254_740_992 {
            output.append(contentsOf: String(Int64(value)).utf8)
        } else {
            output.append(contentsOf: "\(value)".utf8)
        }
    }

    public static func writeString(_ value: String, to output: inout [UInt8]) {
        var value = value
        // Through the string's own buffer: a scan and a copy of plain bytes, not of a generic UTF-8 view
        // (~1,000 instructions for a 24-byte string that way; callgrind).
        value.withUTF8 { writeString(utf8: $0, to: &output) }
    }

    private static func writeString(utf8: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        // Most strings need no escaping: copy them whole.
        if !utf8.contains(where: { $0 < 0x20 || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            output.append(contentsOf: utf8)
            output.append(UInt8(ascii: "\""))
            return
        }
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): output.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: output.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                output.append(contentsOf: [0x5C, UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
