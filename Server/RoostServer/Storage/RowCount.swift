/// How many rows each SQLite class table holds, kept in `_rows` by triggers in the transaction that
/// inserts or deletes them, so a count of a whole class reads one row.
///
/// SQLite's own `COUNT(*)` walks every page of the table's smallest index: 9–14 ms at 1,000,000 objects,
/// the whole cost of `count=1` without a condition (what the Parse SDKs' `count()` of a class sends). Cost
/// to a write: one trigger updating one row, about 1 µs per insert or delete (measured in the README).
/// PostgreSQL keeps its count in another shape (`PostgresRowCount`): one counter row every concurrent writer updated
/// would serialize them.
enum RowCount {
    static let tableSQL = "CREATE TABLE IF NOT EXISTS _rows (tableId INTEGER PRIMARY KEY, rows INTEGER NOT NULL)"

    /// Starts counting the class table `c<tableID>`: its row in `_rows`, from the rows it holds now, and the triggers.
    static func install(tableID: Int64, execute: (String) throws -> Void) throws {
        let table = "\"c\(tableID)\""
        try execute("INSERT OR REPLACE INTO _rows (tableId, rows) VALUES (\(tableID), (SELECT COUNT(*) FROM \(table)))")
        try execute("""
            CREATE TRIGGER IF NOT EXISTS "c\(tableID)_rows_insert" AFTER INSERT ON \(table)
            BEGIN UPDATE _rows SET rows = rows + 1 WHERE tableId = \(tableID); END
            """)
        try execute("""
            CREATE TRIGGER IF NOT EXISTS "c\(tableID)_rows_delete" AFTER DELETE ON \(table)
            BEGIN UPDATE _rows SET rows = rows - 1 WHERE tableId = \(tableID); END
            """)
    }

    /// Forgets a dropped class table (its triggers went with it), on either database.
    static func remove(tableID: Int64, in db: some SQLConnection) throws {
        try db.execute("DELETE FROM _rows WHERE tableId = ?", [.integer(tableID)])
    }

    /// A query for the rows of the class: the kept count on SQLite (`COUNT(*)`, which `COALESCE` reaches only
    /// should the row be missing) and on PostgreSQL, `COUNT(*)` for a view. Safe to splice: the id is an integer.
    static func totalSQL(of schema: ClassSchema, dialect: SQLDialect) -> String {
        let counted = "SELECT COUNT(*) FROM \(schema.tableName)"
        guard schema.view == nil else { return counted }
        guard dialect == .sqlite else { return PostgresRowCount.totalSQL(tableID: schema.id) }
        return "SELECT COALESCE((SELECT rows FROM _rows WHERE tableId = \(schema.id)), (\(counted)))"
    }
}
