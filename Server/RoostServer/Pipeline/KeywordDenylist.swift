import RoostCore

/// Parse Server's default `requestKeywordDenylist`: object data, config parameters, a `beforeSave` webhook's answer
/// and a file's metadata and tags holding a key `constructor` or `__proto__` (anywhere in the key, as Parse's
/// unanchored match), or `_bsontype` with a value holding `Code`, are refused with 105. In JavaScript they pollute
/// prototypes or run code through the MongoDB driver; roost is immune, but a Parse client expects the refusal and the
/// data it refuses would break a move back to Parse Server.
public enum KeywordDenylist {
    private struct Keyword {
        let key: String
        let value: String?
        /// What Parse's message names: `JSON.stringify` of the list's entry.
        var description: String { value.map { #"{"key":"\#(key)","value":"\#($0)"}"# } ?? #"{"key":"\#(key)"}"# }
    }

    /// In Parse's order: the first that matches is the one named.
    private static let keywords = [Keyword(key: "_bsontype", value: "Code"), Keyword(key: "constructor", value: nil),
                                   Keyword(key: "__proto__", value: nil)]

    /// - Parameter custom: `--request-keyword-denylist`, which replaces the default list (`ServerConfig`).
    /// - Throws: `ParseError` 105 `Prohibited keyword in request data: {"key":"constructor"}.` for the first keyword found.
    static func check(_ data: JSON, custom: [Entry]? = nil) throws {
        if let custom {
            if let entry = custom.first(where: { $0.isFound(in: data) }) {
                throw ParseError(.invalidKeyName, "Prohibited keyword in request data: \(entry.description).")
            }
            return
        }
        var found = Set<Int>()  // Indexes into `keywords`, gathered in one walk of the data (every write comes here).
        collect(in: data, into: &found)
        if let first = found.min() {
            throw ParseError(.invalidKeyName, "Prohibited keyword in request data: \(keywords[first].description).")
        }
    }

    /// An entry of Parse's `requestKeywordDenylist` (`--request-keyword-denylist`): a `key`, a `value` or both; a
    /// string is an unanchored regular expression (PCRE2, as Parse's JavaScript `RegExp` reads the usual ones),
    /// anything else is matched by equality. Another JSON value (Parse accepts a bare string) matches nothing here.
    public struct Entry: Sendable {
        let key: JSON?
        let value: JSON?
        /// `JSON.stringify` of the entry, as Parse's message names it.
        let description: String

        /// - Throws: `InvalidPattern` for a string PCRE2 refuses.
        public init(_ json: JSON) throws {
            description = json.jsonText
            guard case .object(let members) = json else {
                key = nil
                value = nil
                return
            }
            key = members["key"]
            value = members["value"]
            for case .string(let pattern)? in [key, value] {
                if let refusal = CompiledRegex.refusal(of: pattern) { throw InvalidPattern(pattern: pattern, reason: refusal) }
            }
        }

        public struct InvalidPattern: Error, CustomStringConvertible {
            public let pattern: String
            public let reason: String
            public var description: String { "invalid regular expression \(pattern): \(reason)" }
        }

        /// Parse's `Utils.objectContainsKeyValue`, over every member at every depth (Parse's stops at the first nested
        /// object it meets). The patterns are compiled per check: a list is short, and a compiled pattern's match
        /// data cannot be shared between threads.
        func isFound(in data: JSON) -> Bool {
            guard key != nil || value != nil else { return false }
            let keyPattern = key?.stringValue.flatMap { CompiledRegex(pattern: $0, options: "") }
            let valuePattern = value?.stringValue.flatMap { CompiledRegex(pattern: $0, options: "") }
            func matches(_ candidate: JSON, _ expected: JSON?, _ pattern: CompiledRegex?) -> Bool {
                if let pattern, case .string(var text) = candidate {
                    return text.withUTF8 { pattern.matches($0) } == .match
                }
                return candidate == expected
            }
            func search(_ json: JSON) -> Bool {
                let members: [(String, JSON)]
                switch json {
                case .object(let object): members = object.map { ($0.key, $0.value) }
                case .array(let elements): members = elements.enumerated().map { (String($0.offset), $0.element) }
                default: return false
                }
                for (name, member) in members {
                    let keyMatches = key == nil || matches(.string(name), key, keyPattern)
                    let valueMatches = value == nil || matches(member, value, valuePattern)
                    if keyMatches && valueMatches { return true }
                    if search(member) { return true }
                }
                return false
            }
            return search(data)
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
