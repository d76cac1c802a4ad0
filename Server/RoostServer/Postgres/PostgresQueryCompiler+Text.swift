import Foundation
import RoostCore

/// `$text` as `TextMatcher` evaluates it, in plain SQL: the search is split in Swift (`TextMatcher.tokens`, the same
/// words, phrases and exclusions), the stored text in SQL the same way — diacritics removed (NFD, then the combining
/// marks dropped), lowercased, split into runs of letters and digits, English stop words dropped and plural endings
/// cut (Porter's first step) — and matched and scored with `TextMatcher.score`'s rules. Not PostgreSQL's own full text
/// search: its English stemmer and stop list find other words than MongoDB's and Roost's SQLite path.
///
/// Where the two can differ: what is a letter or digit, and lowercasing, are PostgreSQL's (the database's `C.UTF-8`
/// ctype, code point by code point) rather than Swift's (grapheme clusters, Unicode's full case mapping); and the
/// diacritics PostgreSQL drops are the combining marks NFD makes, where Foundation also folds a few letters with no
/// decomposition (`ø`, `ł`). Both sides compare in NFC, as Swift compares canonically equivalent words as equal.
///
/// A String field with a declared text index (`TextIndex.fields`) is narrowed first to the rows whose folded words
/// (`textIndexExpression`, which the storage layer indexes with GIN) hold a form of the search's words, as SQLite
/// narrows through its FTS5 table (`TextIndex.narrowing`); the matcher then tests those rows alone.
extension PostgresQueryCompiler {
    func textSearch(_ key: String, _ search: TextSearch) -> PostgresFragment {
        if isArrayField(key) {  // Any string element matches, as a MongoDB text index on an array.
            let score = textScore(of: "(CASE WHEN jsonb_typeof(element.value) = 'string' THEN element.value #>> '{}' END)", search)
            return anyElement(key, PostgresFragment(sql: "\(score.sql) > 0", parameters: score.parameters))
        }
        let score = textScore(key, search)
        let test = PostgresFragment(sql: "\(score.sql) > 0", parameters: score.parameters)
        guard !isDotPath(key), TextIndex.fields(of: schema).contains(key) else { return test }
        switch Self.textNarrowing(search) {
        case .nothing: return PostgresFragment(sql: "FALSE")
        case .unnarrowed: return test
        case .match(let groups, let all):
            let mark = PostgresFragment.parameter
            let expression = Self.textIndexExpression(key)
            let tests = groups.map { _ in "\(expression) && \(mark)::text[]" }.joined(separator: all ? " AND " : " OR ")
            return PostgresFragment(sql: "(\(tests)) AND \(test.sql)", parameters: groups.map { .text(Self.arrayLiteral($0)) } + test.parameters)
        }
    }

    /// A String field's words as a text index keeps them, for every search option: diacritics and case folded, in NFC,
    /// nothing dropped or stemmed (`TextIndex.indexWords`). An immutable expression: `CREATE INDEX … USING GIN ((…))`.
    static func textIndexExpression(_ field: String) -> String {
        "regexp_split_to_array(lower(\(foldedDiacritics("(data ->> '\(field)')"))), '[^[:alnum:]]+')"
    }

    enum TextNarrowing: Equatable {
        /// No row can match (only stop words, say).
        case nothing
        /// The index cannot narrow this search.
        case unnarrowed
        /// Groups of a word's forms: rows holding one of each group (`all`), or one of any group.
        case match([[String]], all: Bool)
    }

    /// The index words every row the matcher scores above 0 holds, as `TextIndex.query` picks them: all the words of its
    /// phrases (when it has any), else any of its words, each in the forms English stemming may have cut (`s`, `es`).
    static func textNarrowing(_ search: TextSearch) -> TextNarrowing {
        let parsed = TextSearchWords(search)
        let required = Array(Set(parsed.phrases.joined())).sorted()
        let words = required.isEmpty ? parsed.wanted : Array(required.prefix(TextIndex.maximumWords))
        if words.isEmpty { return .nothing }
        if words.count > TextIndex.maximumWords { return .unnarrowed }
        var groups: [[String]] = []
        for word in words {
            let forms = TextIndex.indexWords(word)
            guard forms.count == 1, let stem = forms.first else { return .unnarrowed }
            groups.append(TextMatcher.isEnglish(search) ? [stem, stem + "s", stem + "es"] : [stem])
        }
        return .match(groups, all: !required.isEmpty)
    }

    /// `text` without its diacritics: decomposed (NFD), the combining marks dropped, composed again (NFC).
    static func foldedDiacritics(_ text: String) -> String {
        "normalize(regexp_replace(normalize(\(text), NFD), '[\\u0300-\\u036f\\u1ab0-\\u1aff\\u1dc0-\\u1dff\\u20d0-\\u20ff\\ufe20-\\ufe2f]', '', 'g'), NFC)"
    }

    /// The relevance of the query's `$text` search (`order=$score`).
    func textScore(in constraint: QueryConstraint) -> PostgresFragment? {
        constraint.scoredTextSearch.map { textScore($0.key, $0.search) }
    }

    /// The score of the value at `key` as SQLite's `roost_text_score(json_extract(…))` reads it: a string as it is, an
    /// Object or Array as its JSON text, anything else as no text (0).
    private func textScore(_ key: String, _ search: TextSearch) -> PostgresFragment {
        let value = json(key)
        return textScore(of: "(CASE WHEN jsonb_typeof(\(value)) = 'string' THEN \(value) #>> '{}' ELSE \(compactText(value)) END)", search)
    }

    /// `TextMatcher.score` of the SQL text `subject` (NULL scores 0): no excluded word, every phrase, and some wanted
    /// word when there is no phrase; then 0.5 per wanted word found plus half the share of the text they make up.
    private func textScore(of subject: String, _ search: TextSearch) -> PostgresFragment {
        let parsed = TextSearchWords(search)
        let mark = PostgresFragment.parameter
        // Parameters in the order their marks appear: the phrases (outer test), then the inner counts.
        var parameters: [PostgresValue] = parsed.phrases.map { .text(" " + $0.joined(separator: " ") + " ") }
        let phraseTests = String(repeating: " AND position(\(mark) IN counted.joined) > 0", count: parsed.phrases.count)
        let anyWanted = parsed.phrases.isEmpty ? " AND counted.matched > 0" : ""
        let wanted = PostgresValue.text(Self.arrayLiteral(parsed.wanted))
        parameters += [.text(Self.arrayLiteral(parsed.excluded)), wanted, wanted]
        let sql = """
            (SELECT CASE WHEN counted.total > 0 AND NOT counted.excluded\(phraseTests)\(anyWanted) \
            THEN 0.5 * counted.distinct_matched + 0.5 * counted.matched / counted.total ELSE 0 END FROM (\
            SELECT count(*)::float8 AS total, COALESCE(bool_or(word.value = ANY(\(mark)::text[])), FALSE) AS excluded, \
            count(*) FILTER (WHERE word.value = ANY(\(mark)::text[]))::float8 AS matched, \
            count(DISTINCT word.value) FILTER (WHERE word.value = ANY(\(mark)::text[]))::float8 AS distinct_matched, \
            ' ' || string_agg(word.value, ' ' ORDER BY word.position) || ' ' AS joined \
            FROM \(words(of: subject, search)) AS word(value, position)) AS counted)
            """
        return PostgresFragment(sql: sql, parameters: parameters)
    }

    /// The words of `subject` as `TextMatcher.tokens` makes them, with their positions, as a `FROM` item.
    private func words(of subject: String, _ search: TextSearch) -> String {
        var folded = search.diacriticSensitive ? "normalize(\(subject), NFC)" : Self.foldedDiacritics(subject)
        if !search.caseSensitive { folded = "lower(\(folded))" }
        let token = "split.token"
        var word = token
        var filter = "\(token) <> ''"
        if TextMatcher.isEnglish(search) {
            let lower = search.caseSensitive ? "lower(\(token))" : token
            let stopWords = TextMatcher.stopWords.sorted().map { "'\($0)'" }.joined(separator: ",")
            filter += " AND \(lower) <> ALL (ARRAY[\(stopWords)])"
            word = """
                (CASE WHEN char_length(\(token)) <= 3 THEN \(token) \
                WHEN \(lower) LIKE '%sses' OR \(lower) LIKE '%ies' THEN left(\(token), -2) \
                WHEN \(lower) LIKE '%ss' OR \(lower) LIKE '%us' OR \(lower) NOT LIKE '%s' THEN \(token) \
                ELSE left(\(token), -1) END)
                """
        }
        return """
            (SELECT \(word), split.position FROM regexp_split_to_table(\(folded), '[^[:alnum:]]+') WITH ORDINALITY AS split(token, position) \
            WHERE \(filter))
            """
    }

    /// A PostgreSQL array literal of texts (`{"a","b"}`), each element quoted.
    static func arrayLiteral(_ texts: [String]) -> String {
        let quoted = texts.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
        return "{" + quoted.joined(separator: ",") + "}"
    }
}

/// A search's words as `TextMatcher` reads them (quoted phrases, `-excluded` words, and the wanted ones: the plain
/// words and the phrases' words), in NFC, the form the SQL side compares bytes in.
struct TextSearchWords {
    let phrases: [[String]]
    let excluded: [String]
    let wanted: [String]

    init(_ search: TextSearch) {
        let matcher = TextMatcher(search)
        let nfc = { (word: String) in word.precomposedStringWithCanonicalMapping }
        phrases = matcher.phrases.map { $0.map(nfc) }
        excluded = matcher.excluded.map(nfc).sorted()
        wanted = matcher.wanted.map(nfc).sorted()
    }
}
