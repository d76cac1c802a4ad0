import Foundation
import Synchronization

/// How many rows each class table holds on PostgreSQL, kept in `_rows` as SQLite's (`RowCount`), in another shape:
/// not one row per table that every write updates (concurrent creates would wait on it, or fail one another under
/// SERIALIZABLE), but one row per committed write transaction and table, `rows` being what it added (or, negative,
/// removed). A whole-class count sums them; `compact` folds them back into one row per table now and then.
///
/// The stores note what they insert and delete (`SQLConnection.countRows`); `send` appends one row per table with the
/// transaction's COMMIT, in its round trip. `COUNT(*)` reads the whole table: 110.7 ms at 1,000,000 objects
/// (`roost-query-bench --database-url`; 0.24 ms from `_rows`).
/// What this does not see: rows written by other means than roost (psql, another program) leave the count wrong.
enum PostgresRowCount {
    /// Migration 7 of `PostgresSchema`: the table, and the rows of the classes that already have objects.
    static let schemaSQL = """
        CREATE TABLE _rows (tableId bigint NOT NULL, rows bigint NOT NULL);
        CREATE INDEX _rows_table ON _rows (tableId);
        DO $$
        DECLARE class record;
        BEGIN
            FOR class IN SELECT id FROM _schema WHERE to_regclass(format('%I', 'c' || id)) IS NOT NULL LOOP
                EXECUTE format('INSERT INTO _rows (tableId, rows) SELECT %s, COUNT(*) FROM %I', class.id, 'c' || class.id);
            END LOOP;
        END
        $$;
        """

    /// A whole-class count: every row of the table's id (none yet: 0). Safe to splice: the id is an integer.
    static func totalSQL(tableID: Int64) -> String {
        "SELECT COALESCE((SELECT SUM(rows) FROM _rows WHERE tableId = \(tableID)), 0)::bigint"
    }

    /// Queues the transaction's row changes (`WriteState.rowCountChanges`), one row per table, to go out with the
    /// COMMIT. Returns how many rows it added to `_rows`.
    static func send(_ changes: [RowCountChange], in db: PostgresConnection) throws -> Int {
        guard !changes.isEmpty else { return 0 }
        var byTable: [Int64: Int64] = [:]
        for change in changes { byTable[change.tableID, default: 0] += change.rows }
        var sent = 0
        for (tableID, rows) in byTable where rows != 0 {
            try db.sendPreparedWithNext("INSERT INTO _rows (tableId, rows) VALUES ($1, $2)", [.int(tableID), .int(rows)])
            sent += 1
        }
        return sent
    }

    /// Replaces every table's rows by their sum, in one statement: rows another transaction commits meanwhile are not
    /// in its snapshot and stay as they are; two compactions at once take turns on the rows' locks, the second skipping
    /// what the first deleted (READ COMMITTED), so the sums never change.
    static func compact(in db: PostgresConnection) throws {
        _ = try db.transaction(.readCommitted) { db in
            try db.execute("""
                WITH folded AS (DELETE FROM _rows RETURNING tableId, rows)
                INSERT INTO _rows (tableId, rows) SELECT tableId, SUM(rows) FROM folded GROUP BY tableId
                """)
        }
    }
}

/// Rows one statement added to (or removed from) a class table, noted for `PostgresRowCount`.
struct RowCountChange {
    let tableID: Int64
    let rows: Int64
}

/// Runs `PostgresRowCount.compact` in the background once enough rows were added since the last one: a count then
/// sums a few hundred rows at most (a few hundred microseconds), and the compaction's cost is shared by that many
/// write transactions.
final class RowCountCompactor: Sendable {
    /// Rows added to `_rows` (by this node) after which it compacts them.
    static let threshold = 500
    private let added = Atomic<Int>(0)
    private let running = Atomic<Bool>(false)
    private let pool: PostgresPool

    init(pool: PostgresPool) { self.pool = pool }

    /// Notes `rows` more rows in `_rows`; starts a compaction past the threshold unless one is running.
    func added(_ rows: Int) {
        guard rows > 0, added.add(rows, ordering: .relaxed).newValue >= Self.threshold,
              running.compareExchange(expected: false, desired: true, ordering: .acquiring).exchanged else { return }
        added.store(0, ordering: .relaxed)
        DispatchQueue.global(qos: .utility).async { [self] in
            defer { running.store(false, ordering: .releasing) }
            // A failure (the pool closing, the database gone) leaves the rows to the next compaction: counts stay right.
            try? pool.withConnection { try PostgresRowCount.compact(in: $0) }
        }
    }
}
