import Foundation

/// LiveQuery's change log on PostgreSQL, shared by every node: the same `_live_change` and `_live_trim` as on SQLite
/// (`ChangeLog`), numbered by the database instead of by one writer.
///
/// Why `seq` order is commit order: a transaction that recorded changes numbers them last, just before COMMIT
/// (`append`): `_live_take` takes a transaction-scoped advisory lock, then the next numbers from the `_live_seq`
/// sequence. The lock is released only after the commit is visible, so the next transaction to take numbers does so
/// after this one committed (or rolled back, leaving a hole that is never filled). Hence, in any snapshot, every number
/// below a committed one is decided: a reader that sees seq 7 can deliver everything up to 7 without waiting for a
/// transaction still holding 6. Measured alternatives: a counter row updated under SERIALIZABLE fails every
/// overlapping transaction with 40001 (each one redone whole); the lock costs nothing until the numbering, and what it
/// serializes is a few rows' INSERT and the COMMIT (see README, "LiveQuery on PostgreSQL").
///
/// `_live_take` also NOTIFYs `roost_live`, sent at commit: each node's `PostgresChangeFeed` then reads the log.
enum PostgresChangeLog {
    /// The advisory lock numbers are taken under ("roostlq" in ASCII).
    static let lockKey: Int64 = 0x72_6F_6F_73_74_6C_71
    /// The channel a commit with changes notifies.
    static let channel = "roost_live"
    /// The `_live_trim` row that carries the highest `seq` trimmed from the log, whatever its class: a feed behind it
    /// lost changes (no class is named with a `#`).
    static let trimmedMark = "#log"

    /// Migration 4 of `PostgresSchema`. The sequence starts past what the log already numbered.
    static let schemaSQL = """
        CREATE SEQUENCE _live_seq AS bigint;
        SELECT setval('_live_seq', greatest((SELECT coalesce(max(seq), 0) FROM _live_change),
                                            (SELECT coalesce(max(seq), 0) FROM _live_trim)) + 1, false);
        CREATE FUNCTION _live_take(n bigint) RETURNS bigint
            LANGUAGE sql VOLATILE
            AS $$
                SELECT pg_advisory_xact_lock(\(lockKey));
                SELECT pg_notify('\(channel)', '');
                SELECT setval('_live_seq', nextval('_live_seq') + n - 1);
            $$;
        """

    /// Migration 6: `_live_take` as it was, in PL/pgSQL, which keeps its statements' plans for the session (a SQL
    /// function's three were parsed and planned again at every call: 4 % of the machine's CPU under wrk creates).
    static let takeInPLpgSQL = """
        CREATE OR REPLACE FUNCTION _live_take(n bigint) RETURNS bigint
            LANGUAGE plpgsql VOLATILE
            AS $$
            BEGIN
                PERFORM pg_advisory_xact_lock(\(lockKey));
                PERFORM pg_notify('\(channel)', '');
                RETURN setval('_live_seq', nextval('_live_seq') + n - 1);
            END
            $$;
        """

    /// Numbers a transaction's recorded changes and gap marks in their order (`ChangeRecorder.numbersAtCommit`), logs
    /// the changes and raises the marks. Call last in the transaction: the lock it takes is held until COMMIT.
    /// Without gap marks, nothing waits for the numbers: the rows take them from `currval` (which `_live_take`'s
    /// `setval` leaves at the last one), and the statements go out with the COMMIT, in its round trip.
    static func append(_ recorded: [ObjectChange], in db: PostgresConnection) throws {
        guard !recorded.isEmpty else { return }
        let count = Int64(recorded.count)
        guard recorded.allSatisfy({ $0.after != nil || $0.before != nil }) else { return try appendWithMarks(recorded, in: db) }
        try db.sendPreparedWithNext("SELECT _live_take($1)", [.int(count)])
        let at = Int64(Date().timeIntervalSince1970 * 1000)
        // Each row's seq is `currval - (count - 1 - offset)`: first to last.
        let rows = recorded.enumerated().compactMap { offset, change in row(change, seq: count - 1 - Int64(offset), at: at) }
        for start in stride(from: 0, to: rows.count, by: 1_000) {
            let chunk = rows[start..<min(start + 1_000, rows.count)]
            let values = Array(repeating: "(currval('_live_seq') - ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", count: chunk.count).joined(separator: ", ")
            let sql = SQLPlaceholders.postgres(insertSQL + values), parameters = try chunk.flatMap { $0 }.map(PostgresValue.init)
            // The row counts a write group has (up to `WriteBatcher.maximumGroup`) are prepared: parsing and planning
            // the statement cost the server more than inserting its rows.
            if chunk.count <= WriteBatcher.maximumGroup {
                try db.sendPreparedWithNext(sql, parameters)
            } else {
                db.sendWithNext(sql, parameters)
            }
        }
    }

    private static let insertSQL = "INSERT INTO _live_change (seq, className, at, objectId, createdAt, beforeUpdatedAt, beforeACL, beforeData, "
        + "afterUpdatedAt, afterACL, afterData) VALUES "

    /// `append` for changes that include gap marks, which need their numbers here.
    private static func appendWithMarks(_ recorded: [ObjectChange], in db: PostgresConnection) throws {
        let last = try db.fetchRows("SELECT _live_take(?)", [.integer(Int64(recorded.count))], cacheable: true).first?.first?.integer ?? 0
        let first = last - Int64(recorded.count) + 1
        let at = Int64(Date().timeIntervalSince1970 * 1000)
        var rows: [[SQLValue]] = []
        for (offset, change) in recorded.enumerated() {
            let seq = first + Int64(offset)
            guard let row = row(change, seq: seq, at: at) else {
                try ChangeLog.raiseMark(of: change.className, to: seq, in: db)  // A gap mark (`markGap`).
                continue
            }
            rows.append(row)
        }
        // At most 1,000 rows per statement (11 parameters each, PostgreSQL takes 65,535); the row counts that come
        // often (a write, a small batch) keep their prepared statement.
        for start in stride(from: 0, to: rows.count, by: 1_000) {
            let chunk = rows[start..<min(start + 1_000, rows.count)]
            let values = Array(repeating: "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", count: chunk.count).joined(separator: ", ")
            try db.execute(insertSQL + values, chunk.flatMap { $0 }, cacheable: chunk.count <= 8)
        }
    }

    /// A change's `_live_change` values, `seq` first; nil for a gap mark (it has neither version).
    private static func row(_ change: ObjectChange, seq: Int64, at: Int64) -> [SQLValue]? {
        guard let version = change.after ?? change.before else { return nil }
        return [.integer(seq), .text(change.className), .integer(at), .text(version.objectId), .integer(version.createdAt)]
            + columns(of: change.before) + columns(of: change.after)
    }

    private static func columns(of row: StoredRow?) -> [SQLValue] {
        guard let row else { return [.null, .null, .null] }
        return [.integer(row.updatedAt), row.aclText.map(SQLValue.text) ?? .null, .text(row.dataText)]
    }

    /// A node starts feeding LiveQuery: returns the head (every change up to it is committed; the node's feed starts
    /// after it). Under the numbering lock, in READ COMMITTED so the reads after the lock see every numbered commit:
    /// the sequence is moved past the head if a copy's history (`ChangeLog.startNewHistory`) raised the marks past it,
    /// and the classes this node does not record are marked, as `ChangeLog.markUnlogged` does on SQLite.
    static func begin(unrecorded: ([String]) -> [String], in db: PostgresConnection) throws -> Int64 {
        try db.transaction(.readCommitted) { db in
            try db.query("SELECT pg_advisory_xact_lock($1)", [.int(lockKey)])
            let head = try ChangeLog.head(in: db)
            let sequence = try db.fetchRows("SELECT last_value FROM _live_seq", [], cacheable: false).first?.first?.integer ?? 0
            if sequence < head { try db.query("SELECT setval('_live_seq', $1)", [.int(head)]) }
            let classes = try db.fetchRows("SELECT className FROM _schema", [], cacheable: false).compactMap { $0.first?.text }
                + [SessionStore.className]
            let unlogged = unrecorded(classes)
            guard !unlogged.isEmpty else { return head }
            let mark = try db.fetchRows("SELECT _live_take(1)", [], cacheable: false).first?.first?.integer ?? head + 1
            for className in unlogged { try ChangeLog.raiseMark(of: className, to: mark, in: db) }
            return mark
        }
    }

    /// What a feed reads next, in one snapshot: the highest `seq` trimmed (`trimmedMark`, 0 for none) and up to `limit`
    /// changes after `since`, in `seq` order.
    static func changes(after since: Int64, limit: Int, in db: PostgresConnection) throws -> (trimmed: Int64, changes: [ObjectChange]) {
        try db.transaction(.repeatableReadOnly) { db in
            let trimmed = try db.fetchRows("SELECT seq FROM _live_trim WHERE className = ?", [.text(trimmedMark)], cacheable: true)
                .first?.first?.integer ?? 0
            let rows = try db.fetchRows(
                "SELECT seq, className, objectId, createdAt, beforeUpdatedAt, beforeACL, beforeData, afterUpdatedAt, afterACL, afterData "
                    + "FROM _live_change WHERE seq > ? ORDER BY seq LIMIT ?",
                [.integer(since), .integer(Int64(limit))], cacheable: true)
            return (trimmed, rows.map { row in
                ChangeLog.change(seq: row[0].integer ?? 0, className: row[1].text ?? "", columns: Array(row[2...]))
            })
        }
    }
}
