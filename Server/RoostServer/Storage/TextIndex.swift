import Foundation
import RoostCore

/// A full-text index on one field of a class (`$text`): an FTS5 table `c<id>_text_<field>` holding, for each
/// row of the class table with that field, the field's words folded (case and diacritics) and unstemmed,
/// under the same rowid. Triggers on the class table keep it in step inside the writing transaction (through a
/// staging table, see `create`), so every write path (creates, updates, deletes, batches, imports, a rolled-back
/// batch) leaves it matching.
///
/// The index narrows, `TextMatcher` decides: a search becomes an FTS5 query that finds every row
/// `TextMatcher` could match (and perhaps a few more), and the usual `roost_text_score(...) > 0` test and
/// `$score` run on those rows only. So stemming, stop words, phrases, exclusions and the case and diacritic
/// options keep today's meaning and scores exactly; the index only spares reading the other rows.
///
/// Created as Parse's MongoDB adapter does (`createTextIndexesIfNeeded`): on the first `$text` search of a
/// field (then listed in `GET /schemas` as `<field>_text: {<field>: "text"}`), or when declared through
/// `indexes` with `{"<field>": "text"}`; existing rows are indexed when it is created.
enum TextIndex {
    /// The value that marks a field of a declared index as a text index, as in MongoDB.
    static let marker = "text"

    /// The fields of `schema` that have a text index.
    static func fields(of schema: ClassSchema) -> Set<String> {
        guard schema.view == nil, case .object(let indexes)? = schema.indexes else { return [] }
        var fields = Set<String>()
        for definition in indexes.values {
            for (field, kind) in definition.objectValue ?? [:] where kind.stringValue == marker { fields.insert(field) }
        }
        return fields
    }

    /// Whether a field of this type can have a text index (strings, or arrays of strings).
    static func accepts(_ type: FieldType?) -> Bool { type == .string || type == .array }

    /// The names of `field`'s index objects start with this (`$` ends the field name: no other field's names can
    /// collide, nor FTS5's shadow tables `…_data`, `…_idx`). Safe to splice: the table id is an integer, field names
    /// are validated identifiers.
    private static func base(_ schema: ClassSchema, _ field: String) -> String { "c\(schema.id)_text_\(field)$" }

    /// The FTS5 table of `field`.
    static func table(_ schema: ClassSchema, _ field: String) -> String { "\"\(base(schema, field))\"" }

    /// The rows written in the current transaction, with their new words (NULL: deleted or no words left), waiting
    /// to go into the FTS5 table at the commit (`flush`); `replaced`: the FTS5 table may hold older words of the row.
    private static func staging(_ base: String) -> String { "\"\(base)new\"" }

    private static func trigger(_ schema: ClassSchema, _ field: String, _ event: String) -> String {
        "\"\(base(schema, field))\(event)\""
    }

    /// Creates the index of `field` (if missing) and indexes the rows already stored.
    ///
    /// The triggers stage each write's words in a plain table, and the commit moves them into FTS5 in one statement
    /// (`SQLiteConnection.inTransaction`): FTS5 writes out its pending words at every savepoint, and a trigger runs in
    /// one, as does each request of a write batch, so writing FTS5 from the triggers cost 2.5× a create (measured,
    /// SQLite alone: 0.29–0.39 of the plain insert rate against 0.75 for one FTS5 insert per transaction). A query
    /// reads both tables (the staged rows are the writer's own transaction only).
    static func create(_ field: String, of schema: ClassSchema, in db: any SQLConnection) throws {
        if db.dialect == .postgres { return try db.execute(PostgresTextIndex.createSQL(field, of: schema), cacheable: false) }
        let base = base(schema, field), fts = table(schema, field), staged = staging(base), path = "'$.\(field)'"
        let words = { (row: String) in "roost_text_words(json_extract(\(row).data, \(path)), json_type(\(row).data, \(path)))" }
        let hasWords = { (row: String) in "json_type(\(row).data, \(path)) IN ('text', 'array')" }
        let stage = { (row: String, words: String, replaced: Int) in
            """
            INSERT INTO \(staged) (rowid, words, replaced) VALUES (\(row).rowid, \(words), \(replaced))
                ON CONFLICT (rowid) DO UPDATE SET words = excluded.words; SELECT roost_text_stage('\(base)');
            """
        }
        // detail=none: the index keeps which rows hold a word, not where (the query needs no more); columnsize=0: no
        // per-row lengths (no bm25). Rowids are the class table's: updates keep them, and VACUUM (INTO, the backup)
        // copies rowid tables as they are.
        for statement in [
            "CREATE VIRTUAL TABLE IF NOT EXISTS \(fts) USING fts5(words, tokenize = 'ascii', detail = 'none', columnsize = 0)",
            "CREATE TABLE IF NOT EXISTS \(staged) (rowid INTEGER PRIMARY KEY, words TEXT, replaced INTEGER NOT NULL)",
            """
            CREATE TRIGGER IF NOT EXISTS \(trigger(schema, field, "insert")) AFTER INSERT ON \(schema.tableName)
                WHEN \(hasWords("new")) BEGIN \(stage("new", words("new"), 0)) END
            """,
            """
            CREATE TRIGGER IF NOT EXISTS \(trigger(schema, field, "update")) AFTER UPDATE OF data ON \(schema.tableName)
                WHEN json_extract(old.data, \(path)) IS NOT json_extract(new.data, \(path))
                BEGIN \(stage("new", "CASE WHEN \(hasWords("new")) THEN \(words("new")) END", 1)) END
            """,
            """
            CREATE TRIGGER IF NOT EXISTS \(trigger(schema, field, "delete")) AFTER DELETE ON \(schema.tableName)
                WHEN \(hasWords("old")) BEGIN \(stage("old", "NULL", 1)) END
            """,
            "DELETE FROM \(fts)",
            "DELETE FROM \(staged)",
            "INSERT INTO \(fts) (rowid, words) SELECT rowid, \(words(schema.tableName)) FROM \(schema.tableName) WHERE \(hasWords(schema.tableName))",
        ] {
            try db.execute(statement, cacheable: false)
        }
    }

    /// Moves the staged words of the indexes named by `bases` into their FTS5 tables (before a commit).
    static func flush(_ bases: Set<String>, in db: any SQLConnection) throws {
        for base in bases.sorted() {
            let fts = "\"\(base)\"", staged = staging(base)
            try db.execute("DELETE FROM \(fts) WHERE rowid IN (SELECT rowid FROM \(staged) WHERE replaced)")
            try db.execute("INSERT INTO \(fts) (rowid, words) SELECT rowid, words FROM \(staged) WHERE words IS NOT NULL")
            try db.execute("DELETE FROM \(staged)")
        }
    }

    /// Flushes what a connection that does not flush left staged (a migration's, through GRDB).
    static func flushAll(in db: any SQLConnection) throws {
        let names = try db.fetchRows("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'c*_text_*$new'", [], cacheable: false)
        try flush(Set(names.compactMap { $0.first?.text.map { String($0.dropLast(3)) } }), in: db)
    }

    static func drop(_ field: String, of schema: ClassSchema, in db: any SQLConnection) throws {
        if db.dialect == .postgres { return try db.execute(PostgresTextIndex.dropSQL(field, of: schema), cacheable: false) }
        for event in ["insert", "update", "delete"] { try db.execute("DROP TRIGGER IF EXISTS \(trigger(schema, field, event))", cacheable: false) }
        try db.execute("DROP TABLE IF EXISTS \(table(schema, field))", cacheable: false)
        try db.execute("DROP TABLE IF EXISTS \(staging(base(schema, field)))", cacheable: false)
    }

    /// Drops the text index of a field being deleted and the declared indexes naming it.
    static func forget(_ field: String, of schema: ClassSchema, in db: any SQLConnection) throws -> ClassSchema {
        guard fields(of: schema).contains(field), case .object(var indexes)? = schema.indexes else { return schema }
        try drop(field, of: schema, in: db)
        indexes = indexes.filter { $0.value[field]?.stringValue != marker }
        var updated = schema
        updated.indexes = indexes.isEmpty ? nil : .object(indexes)
        // A definition over several fields went with it: their tables go too, unless another definition keeps them.
        for other in fields(of: schema).subtracting(fields(of: updated)) where other != field { try drop(other, of: schema, in: db) }
        return updated
    }

    /// Parse's way (`createTextIndexesIfNeeded`): adds `<field>_text: {<field>: "text"}` to the schema's indexes
    /// and creates it. Returns the schema unchanged when the field cannot have one or already has one.
    static func declareAutomatically(_ field: String, in schema: ClassSchema, in db: any SQLConnection) throws -> ClassSchema {
        guard accepts(schema.fields[field]), !fields(of: schema).contains(field) else { return schema }
        var indexes = schema.indexes?.objectValue ?? [:]
        if indexes.isEmpty { indexes["_id_"] = ["_id": 1] }  // As Parse lists a class's first indexes (`setIndexesWithSchemaFormat`).
        var name = "\(field)_text"
        // A name already taken by an index of the client's: another one (not creating it would retry on every search).
        var suffix = 0
        while indexes[name] != nil {
            suffix += 1
            name = "\(field)_text_\(suffix)"
        }
        indexes[name] = [field: .string(marker)]
        var updated = schema
        updated.indexes = .object(indexes)
        try create(field, of: updated, in: db)
        try SchemaStore.save(updated, in: db)
        return updated
    }

    /// The top-level fields `constraint` searches with `$text` that could have a text index but have none yet.
    static func missing(for constraint: QueryConstraint, in schema: ClassSchema) -> Set<String> {
        guard schema.view == nil else { return [] }
        let indexed = fields(of: schema)
        return searchedFields(constraint).filter { !indexed.contains($0) && accepts(schema.fields[$0]) }
    }

    private static func searchedFields(_ constraint: QueryConstraint) -> Set<String> {
        switch constraint {
        case .and(let parts), .or(let parts), .nor(let parts): return parts.reduce(into: []) { $0.formUnion(searchedFields($1)) }
        case .field(let key, .matchesText) where !key.utf8.contains(UInt8(ascii: ".")): return [key]
        default: return []
        }
    }

    /// The test that narrows a `$text` search on `key` to the rows its index finds, or nil when there is no
    /// index or the search cannot be narrowed (then every row is tested, as without an index).
    static func narrowing(_ key: String, _ search: TextSearch, in schema: ClassSchema) -> SQLFragment? {
        guard !key.utf8.contains(UInt8(ascii: ".")), fields(of: schema).contains(key) else { return nil }
        switch query(for: TextMatcher(search), english: TextMatcher.isEnglish(search)) {
        case .nothing: return SQLFragment(sql: "0", arguments: [])
        case .unnarrowed: return nil
        case .match(let expression):
            let fts = table(schema, key)
            return SQLFragment(
                sql: "\(schema.tableName).rowid IN (SELECT rowid FROM \(fts) WHERE \(fts) MATCH ? UNION ALL SELECT rowid FROM \(staging(base(schema, key))))",
                arguments: [.text(expression)])
        }
    }

    enum Query: Equatable {
        /// No row can match (e.g. only stop words).
        case nothing
        /// The index cannot narrow this search; every row is tested.
        case unnarrowed
        /// An FTS5 query (every word quoted: nothing of the client's text is read as FTS5 syntax).
        case match(String)
    }

    /// Most words an FTS5 query names (an OR of more would be read from the index as slowly as the rows).
    static let maximumWords = 64

    /// The FTS5 query that finds every row `matcher` can score above 0: all the words of its phrases (when it
    /// has any; their order is left to the matcher), else any of its words.
    ///
    /// Each word is looked up in the forms it may have in the index. An English word is stemmed by dropping
    /// `s` or `es` (`TextMatcher.singular`), so the stem `bagel` may be indexed as `bagel`, `bagels` or
    /// `bageles`; other languages match words as they are.
    static func query(for matcher: TextMatcher, english: Bool) -> Query {
        let required = Array(Set(matcher.phrases.joined())).sorted()
        let words = required.isEmpty ? matcher.wanted.sorted() : Array(required.prefix(maximumWords))  // Fewer required words still narrow.
        if words.isEmpty { return .nothing }
        if words.count > maximumWords { return .unnarrowed }
        var groups: [String] = []
        for word in words {
            let forms = indexWords(word)
            guard forms.count == 1, let stem = forms.first else { return .unnarrowed }
            let variants = english ? [stem, stem + "s", stem + "es"] : [stem]
            groups.append("(" + variants.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(separator: " OR ") + ")")
        }
        return .match(groups.joined(separator: required.isEmpty ? " OR " : " AND "))
    }

    /// The words of `text` as the index keeps them: `TextMatcher`'s words folded for case and diacritics, stop
    /// words kept and nothing stemmed (the index serves every language and option), in canonical composition (so
    /// equal words are equal bytes). Each is letters and digits only: the `ascii` tokenizer, which splits on
    /// ASCII punctuation and spaces alone, keeps every one whole.
    static func indexWords(_ text: String) -> [String] {
        TextMatcher.tokens(text, TextSearch(term: "", language: "none")).map(\.precomposedStringWithCanonicalMapping)
    }

    /// What `roost_text_words` stores for a field's value: its words separated by spaces, an array's string elements together.
    static func storedWords(_ value: String, isArray: Bool) -> String {
        guard isArray else {
            // ASCII text as it is: the tokenizer finds the same words in it (`roost_text_words` skips the copy).
            if value.utf8.allSatisfy({ $0 < 0x80 }) { return value }
            return indexWords(value).joined(separator: " ")
        }
        guard case .array(let elements)? = try? JSONParser.parse(value) else { return "" }
        return elements.compactMap(\.stringValue).flatMap(indexWords).joined(separator: " ")
    }
}

/// The text indexes whose staging tables the current transaction wrote (`roost_text_stage`, from their triggers).
final class StagedTextIndexes {
    private(set) var bases: Set<String> = []

    func note(_ base: String) { bases.insert(base) }

    func take() -> Set<String> {
        defer { bases.removeAll() }
        return bases
    }
}
