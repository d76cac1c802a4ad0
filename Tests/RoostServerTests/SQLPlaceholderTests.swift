@testable import RoostServer
import Testing

/// SQLite's `?` marks as PostgreSQL's `$n`, outside literals, quoted names and comments.
@Suite struct SQLPlaceholderTests {
    static let cases: [(sqlite: String, postgres: String)] = [
        ("SELECT 1", "SELECT 1"),
        ("SELECT a FROM t WHERE b = ? AND c = ?", "SELECT a FROM t WHERE b = $1 AND c = $2"),
        // Numbered marks, reused; a bare `?` after them takes the largest number so far plus one, as in SQLite.
        ("INSERT INTO _config (id, params, masterKeyOnly) VALUES (1, ?1, ?2) ON CONFLICT (id) DO UPDATE SET params = ?1, masterKeyOnly = ?2",
         "INSERT INTO _config (id, params, masterKeyOnly) VALUES (1, $1, $2) ON CONFLICT (id) DO UPDATE SET params = $1, masterKeyOnly = $2"),
        ("a = ?2 OR b = ? OR c = ?1 OR d = ?", "a = $2 OR b = $3 OR c = $1 OR d = $4"),
        ("x IN (?,?,?)", "x IN ($1,$2,$3)"),
        // Text, not marks.
        ("SELECT '?', 'it''s ?', ? FROM t", "SELECT '?', 'it''s ?', $1 FROM t"),
        (#"SELECT "a?b", "say ""?""" FROM t WHERE x = ?"#, #"SELECT "a?b", "say ""?""" FROM t WHERE x = $1"#),
        ("SELECT ? -- why?\n, ?", "SELECT $1 -- why?\n, $2"),
        ("SELECT /* ? /* nested ? */ still ? */ ?", "SELECT /* ? /* nested ? */ still ? */ $1"),
        (#"SELECT E'\'?', e'a\\', ?"#, #"SELECT E'\'?', e'a\\', $1"#),
        // `like'...'` is an identifier before a literal, not an E string: the backslash is text.
        (#"SELECT like'\', ?"#, #"SELECT like'\', $1"#),
        ("CREATE FUNCTION f() RETURNS text AS $$ SELECT '?' || ? $$ LANGUAGE sql; SELECT ?",
         "CREATE FUNCTION f() RETURNS text AS $$ SELECT '?' || ? $$ LANGUAGE sql; SELECT $1"),
        ("SELECT $body$ ? $x$ ? $body$, ?", "SELECT $body$ ? $x$ ? $body$, $1"),
        // `$` in a name, and `$1` (a parameter) are not dollar quotes; SQL without marks is returned as it is.
        ("SELECT a$b FROM t WHERE c = ?", "SELECT a$b FROM t WHERE c = $1"),
        ("SELECT $1, $2 FROM t", "SELECT $1, $2 FROM t"),
        ("json_extract(data, '$.username') = lower(?)", "json_extract(data, '$.username') = lower($1)"),
        ("SELECT 'unterminated ?", "SELECT 'unterminated ?"),
        ("SELECT ?é", "SELECT $1é"),
    ]

    @Test func marksBecomeNumberedParameters() {
        for (sqlite, postgres) in Self.cases {
            #expect(SQLPlaceholders.translate(sqlite) == postgres, "\(sqlite)")
            #expect(SQLPlaceholders.postgres(sqlite) == postgres, "\(sqlite)")
        }
    }

    @Test func theCacheStaysBounded() {
        for number in 0..<(SQLPlaceholders.cacheLimit * 2 + 10) {
            #expect(SQLPlaceholders.postgres("SELECT ? + \(number)") == "SELECT $1 + \(number)")
        }
        #expect(SQLPlaceholders.cachedCount <= SQLPlaceholders.cacheLimit)
    }
}
