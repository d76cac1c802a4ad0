/// A full text search (`$text`), as Parse passes it to MongoDB and Postgres:
/// `{"$search": {"$term": "…", "$language": "…", "$caseSensitive": b, "$diacriticSensitive": b}}`.
public struct TextSearch: Equatable, Sendable {
    /// Words (any may match), `"quoted phrases"` (all must appear) and `-words` (none may appear).
    public var term: String
    /// `english` (the default) removes English stop words and suffixes; `none` and other languages match words as they are.
    public var language: String?
    public var caseSensitive: Bool
    public var diacriticSensitive: Bool

    public init(term: String, language: String? = nil, caseSensitive: Bool = false, diacriticSensitive: Bool = false) {
        self.term = term
        self.language = language
        self.caseSensitive = caseSensitive
        self.diacriticSensitive = diacriticSensitive
    }

    /// Parses the operand of `$text`, with Parse's 107 messages.
    static func parse(_ operand: JSON) throws -> TextSearch {
        guard case .object(let search)? = operand["$search"] else {
            throw ParseError(.invalidJSON, "bad $text: $search, should be object")
        }
        guard case .string(let term)? = search["$term"], !term.isEmpty else {
            throw ParseError(.invalidJSON, "bad $text: $term, should be string")
        }
        var result = TextSearch(term: term)
        if let language = search["$language"] {
            guard case .string(let name) = language else { throw ParseError(.invalidJSON, "bad $text: $language, should be string") }
            result.language = name
        }
        for (key, flag) in [("$caseSensitive", \TextSearch.caseSensitive), ("$diacriticSensitive", \TextSearch.diacriticSensitive)] {
            guard let value = search[key] else { continue }
            guard case .bool(let on) = value else { throw ParseError(.invalidJSON, "bad $text: \(key), should be boolean") }
            result[keyPath: flag] = on
        }
        return result
    }

    var json: JSON {
        var search: [String: JSON] = ["$term": .string(term)]
        if let language { search["$language"] = .string(language) }
        if caseSensitive { search["$caseSensitive"] = true }
        if diacriticSensitive { search["$diacriticSensitive"] = true }
        return ["$search": .object(search)]
    }
}
