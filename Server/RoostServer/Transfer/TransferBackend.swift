/// The database an export reads or an import fills: a data directory's SQLite file (and its `files/`), or a
/// PostgreSQL database (files in its `_file` tables). An export from either imports into either.
public enum TransferBackend: Sendable {
    case sqlite(dataDirectory: String)
    /// `postgres://user:password@host:port/database`, as `roost serve --database-url` takes it.
    case postgres(url: String)

    /// Connects to the PostgreSQL database and brings its tables up to date, as a starting node would.
    /// - Throws: `TransferError` naming the server (never the password) when it cannot connect.
    static func openPostgres(_ url: String) throws -> PostgresConnection {
        do {
            let db = try PostgresConnection(url: url)
            try PostgresSchema.migrate(db)
            return db
        } catch let error as PostgresError {
            throw TransferError("cannot open the PostgreSQL database: \(error). Check --database-url (or ROOST_DATABASE_URL).")
        }
    }
}
