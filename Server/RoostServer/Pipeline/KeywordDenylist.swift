import RoostCore

/// Parse Server's default `requestKeywordDenylist`: object data, config parameters, a `beforeSave` webhook's answer
/// and a file's metadata and tags holding a key `constructor` or `__proto__` (anywhere in the key, as Parse's
/// unanchored match), or `_bsontype` with a value holding `Code`, are refused with 105. In JavaScript they pollute
/// prototypes or run code through the MongoDB driver; roost is immune, but a Parse client expects the refusal and the
/// data it refuses would break a move back to Parse Server.
enum KeywordDenylist {
    private struct Keyword {
        let key: String
        let value: String?
        /// What Parse's message names: `JSON.stringify` of the list's entry.
        var description: String { value.map { #"{"key":"\#(key)","value":"\#($0)"}"# } ?? #"{"key":"\#(key)"}"# }
    }

    /// In Parse's order: the first that matches is the one named.
    private static let keywords = [Keyword(key: "_bsontype", value: "Code"), Keyword(key: "constructor", value: nil),
                                   Keyword(key: "__proto__", value: nil)]

    /// - Throws: `ParseError` 105 `Prohibited keyword in request data: {"key":"constructor"}.` for the first keyword found.
    static func check(_ data: JSON) throws {
        var found = Set<Int>()  // Indexes into `keywords`, gathered in one walk of the data (every write comes here).
        collect(in: data, into: &found)
        if let first = found.min() {
            throw ParseError(.invalidKeyName, "Prohibited keyword in request data: \(keywords[first].description).")
        }
    }

    /// Whether the request's body is data Parse scans: a create or update of an object (`/classes`, `/users`, `/roles`,
    /// `/installations`, `/sessions`) or the config's parameters.
    static func scans(method: String, segments: [String]) -> Bool {
        guard method == "POST" || method == "PUT", let first = segments.first else { return false }
        switch first {
        case "classes": return segments.count >= 2
        case "users": return segments.count <= 2 && segments != ["users", "me"]
        case "roles", "installations", "sessions": return segments.count <= 2
        case "config": return method == "PUT"
        default: return false
        }
    }

    /// Whether `text` holds `part`, compared as UTF-8 bytes (the keywords are ASCII, so byte and code-unit matches
    /// agree). `String.contains` with Foundation loaded goes through `NSString.range(of:)`: ~4,000 instructions a
    /// call, 40k of a create's 420k (callgrind); the standard library's `utf8.firstRange(of:)` was slower still (a
    /// create 538k). Hand-written, a few instructions per byte of the key.
    static func holds(_ text: String, _ part: String) -> Bool {
        var text = text, part = part
        return text.withUTF8 { haystack in
            part.withUTF8 { needle in
                guard !needle.isEmpty, needle.count <= haystack.count else { return needle.isEmpty }
                for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
                    if (1..<needle.count).allSatisfy({ haystack[start + $0] == needle[$0] }) { return true }
                }
                return false
            }
        }
    }

    private static func collect(in json: JSON, into found: inout Set<Int>) {
        switch json {
        case .object(let members):
            for (key, value) in members {
                for (index, keyword) in keywords.enumerated() where holds(key, keyword.key) {
                    if let expected = keyword.value {
                        if let string = value.stringValue, holds(string, expected) { found.insert(index) }
                    } else {
                        found.insert(index)
                    }
                }
                collect(in: value, into: &found)
            }
        case .array(let values):
            for value in values { collect(in: value, into: &found) }
        default:
            break
        }
    }
}
