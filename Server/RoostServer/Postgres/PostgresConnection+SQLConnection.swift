import RoostCore

/// The stores' side of a PostgreSQL connection (see `SQLConnection`): the same calls as on SQLite.
extension PostgresConnection: SQLConnection {
    var dialect: SQLDialect { .postgres }

    func run(_ sql: String, _ arguments: [SQLValue], cacheable: Bool) throws {
        try execute(sql, arguments, cacheable: cacheable)
    }

    func runSoon(_ sql: String) throws { sendWithNext(sql) }

    /// What PostgreSQL refuses in a client's values or patterns, answered as Parse answers a bad value (never a 500), at
    /// the statement: a grouped write answers each request in its own savepoint.
    static func answeringClientErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresError where error.sqlState == .untranslatableCharacter {
            throw ParseError(.invalidJSON, "A string holding the NUL character (U+0000) cannot be stored on PostgreSQL.")
        } catch let error as PostgresError where error.sqlState == .invalidRegularExpression {
            // A pattern PCRE2 accepts (checked before) that PostgreSQL's regex engine refuses.
            throw ParseError(.invalidQuery, "bad regex: \(error.message)")
        }
    }
}
