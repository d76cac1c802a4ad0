/// Finds where a few top-level fields' values lie in a stored object's JSON text, without parsing the rest: what
/// `StreamedGroup` reads from each row on SQLite instead of `json_extract`.
///
/// Measured over 1,000,000 rows like the query benchmark's (five fields, ~100 bytes; sqlite3 CLI, this machine):
/// reading `data` alone took 0.16 s, `json_extract` of two fields 0.52 s (SQLite 3.40 parses the whole text into a
/// node array per row, and copies each result); the `$group` reading them took 0.95–1.09 s of CPU, 0.39–0.42 s
/// with this scan.
///
/// Only the structure is scanned here (strings, nesting); each value found is parsed by `JSONParser`, as the
/// in-memory path parses the whole text, and a text the scan does not follow (an escaped key, or not an object)
/// answers nil, for the caller to parse it whole. As `JSONParser`, the last of duplicate keys wins.
struct TopLevelFields {
    /// The fields' names, as the UTF-8 of identifiers (`Names.isValidIdentifier`).
    private let names: [[UInt8]]

    init(_ names: [String]) { self.names = names.map { Array($0.utf8) } }

    /// The byte ranges of each name's value in `text` (nil where the object has no such field), or nil when `text`
    /// is not an object this scan follows.
    func ranges(in text: UnsafeBufferPointer<UInt8>, into found: inout [Range<Int>?]) -> Bool {
        for position in found.indices { found[position] = nil }
        var index = skipWhitespace(text, 0)
        guard index < text.count, text[index] == UInt8(ascii: "{") else { return false }
        index = skipWhitespace(text, index + 1)
        if index < text.count, text[index] == UInt8(ascii: "}") { return skipWhitespace(text, index + 1) == text.count }
        while true {
            guard index < text.count, text[index] == UInt8(ascii: "\"") else { return false }
            let keyStart = index + 1
            var keyEnd = keyStart
            while keyEnd < text.count, text[keyEnd] != UInt8(ascii: "\"") {
                // An escaped key may spell a name differently: parse that text whole.
                if text[keyEnd] == UInt8(ascii: "\\") { return false }
                keyEnd += 1
            }
            index = skipWhitespace(text, keyEnd + 1)
            guard index < text.count, text[index] == UInt8(ascii: ":") else { return false }
            let valueStart = skipWhitespace(text, index + 1)
            guard let valueEnd = skipValue(text, valueStart) else { return false }
            let key = UnsafeBufferPointer(rebasing: text[keyStart..<keyEnd])
            for (position, name) in names.enumerated() where name.count == key.count && name.elementsEqual(key) {
                found[position] = valueStart..<valueEnd
            }
            index = skipWhitespace(text, valueEnd)
            guard index < text.count else { return false }
            if text[index] == UInt8(ascii: ",") {
                index = skipWhitespace(text, index + 1)
            } else {
                return text[index] == UInt8(ascii: "}") && skipWhitespace(text, index + 1) == text.count
            }
        }
    }

    private func skipWhitespace(_ text: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int {
        var index = start
        while index < text.count, Self.isWhitespace(text[index]) { index += 1 }
        return index
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }

    /// The end of the value starting at `start`: a string, an array or object (with the strings inside), or a
    /// number or literal (up to the next delimiter). `JSONParser` checks the values that are read.
    private func skipValue(_ text: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int? {
        guard start < text.count else { return nil }
        switch text[start] {
        case UInt8(ascii: "\""): return skipString(text, start)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var index = start, depth = 0
            while index < text.count {
                switch text[index] {
                case UInt8(ascii: "\""):
                    guard let end = skipString(text, index) else { return nil }
                    index = end
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return index + 1 }
                default: break
                }
                index += 1
            }
            return nil
        default:
            var index = start
            while index < text.count {
                let byte = text[index]
                if byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || Self.isWhitespace(byte) { break }
                index += 1
            }
            return index == start ? nil : index
        }
    }

    /// Just past the closing quote of the string starting at `start`.
    private func skipString(_ text: UnsafeBufferPointer<UInt8>, _ start: Int) -> Int? {
        var index = start + 1
        while index < text.count {
            switch text[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index + 1
            default: index += 1
            }
        }
        return nil
    }
}
