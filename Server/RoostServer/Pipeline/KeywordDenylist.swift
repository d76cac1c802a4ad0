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
        for keyword in keywords where contains(keyword, in: data) {
            throw ParseError(.invalidKeyName, "Prohibited keyword in request data: \(keyword.description).")
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

    private static func contains(_ keyword: Keyword, in json: JSON) -> Bool {
        switch json {
        case .object(let members):
            for (key, value) in members {
                if key.contains(keyword.key) {
                    guard let expected = keyword.value else { return true }
                    if let string = value.stringValue, string.contains(expected) { return true }
                }
                if contains(keyword, in: value) { return true }
            }
            return false
        case .array(let values):
            return values.contains { contains(keyword, in: $0) }
        default:
            return false
        }
    }
}
