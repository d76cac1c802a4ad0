import RoostCore

/// XML property lists for clients that ask for them (`Accept: application/x-plist`).
///
/// Objects become `<dict>` (keys sorted), arrays `<array>`, integral numbers `<integer>`, other
/// numbers `<real>`, Booleans `<true/>`/`<false/>`. A plist has no null: null members are left out
/// of dicts and written as an empty `<string/>` in arrays. Parse's typed values (Dates, Pointers...)
/// keep their `__type` dicts, so nothing is lost in the conversion.
enum PropertyList {
    static let contentType = "application/x-plist"

    static func wants(_ accept: String?) -> Bool { accept?.contains(contentType) ?? false }

    static func encode(_ value: JSON) -> [UInt8] {
        var output = Array("""
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">

            """.utf8)
        write(value, to: &output)
        output.append(contentsOf: "\n</plist>\n".utf8)
        return output
    }

    private static func write(_ value: JSON, to output: inout [UInt8]) {
        switch value {
        case .null: output.append(contentsOf: "<string/>".utf8)
        case .bool(let flag): output.append(contentsOf: (flag ? "<true/>" : "<false/>").utf8)
        case .number(let number):
            var text: [UInt8] = []
            JSON.writeNumber(number, to: &text)
            let isIntegral = !text.contains(UInt8(ascii: ".")) && !text.contains(UInt8(ascii: "e"))
            let tag = isIntegral ? "integer" : "real"
            output.append(contentsOf: "<\(tag)>".utf8)
            output.append(contentsOf: text)
            output.append(contentsOf: "</\(tag)>".utf8)
        case .string(let text):
            output.append(contentsOf: "<string>".utf8)
            escape(text, to: &output)
            output.append(contentsOf: "</string>".utf8)
        case .array(let elements):
            output.append(contentsOf: "<array>".utf8)
            for element in elements { write(element, to: &output) }
            output.append(contentsOf: "</array>".utf8)
        case .object(let members):
            output.append(contentsOf: "<dict>".utf8)
            for key in members.keys.sorted() where members[key] != .null {
                output.append(contentsOf: "<key>".utf8)
                escape(key, to: &output)
                output.append(contentsOf: "</key>".utf8)
                write(members[key]!, to: &output)
            }
            output.append(contentsOf: "</dict>".utf8)
        case .encodedFragment(let bytes):
            write((try? JSONParser.parse(bytes, maximumDepth: 1000)) ?? .null, to: &output)
        }
    }

    private static func escape(_ text: String, to output: inout [UInt8]) {
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "&"): output.append(contentsOf: "&amp;".utf8)
            case UInt8(ascii: "<"): output.append(contentsOf: "&lt;".utf8)
            case UInt8(ascii: ">"): output.append(contentsOf: "&gt;".utf8)
            case 0..<0x20 where byte != 0x09 && byte != 0x0A && byte != 0x0D:
                continue  // Not allowed in XML 1.0.
            default: output.append(byte)
            }
        }
    }
}
