/// The stores' side of a PostgreSQL connection (see `SQLConnection`): the same calls as on SQLite.
extension PostgresConnection: SQLConnection {
    var dialect: SQLDialect { .postgres }

    func run(_ sql: String, _ arguments: [SQLValue], cacheable: Bool) throws {
        try execute(sql, arguments, cacheable: cacheable)
    }
}
