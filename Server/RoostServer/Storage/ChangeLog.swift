import Foundation

/// LiveQuery's durable change log (`_live_change`): every object write of a live class, with the versions
/// before and after as stored (their JSON text, never re-encoded), written in the write's own transaction
/// under a `seq` that grows with commit order. A client that reconnects resumes from its last `seq`.
///
/// Trimmed by `trim` (a timer, never per write) to a time window and a number of changes; `_live_trim`
/// keeps, per class, the highest `seq` trimmed, so a class whose own changes are all still here resumes
/// even when other classes' changes were dropped. `seq` never goes backwards: after a restart the head is
/// the largest of the log's and the trim marks' (`head(in:)`).
enum ChangeLog {
    /// The log's SQL (migration "v11: LiveQuery change log"). `seq` is assigned by the writer, not by
    /// SQLite: a plain INTEGER PRIMARY KEY could reuse a trimmed number, AUTOINCREMENT costs a write more.
    static let schemaSQL = """
        CREATE TABLE _live_change (
            seq INTEGER PRIMARY KEY NOT NULL,
            className TEXT NOT NULL,
            at INTEGER NOT NULL,
            objectId TEXT NOT NULL,
            createdAt INTEGER NOT NULL,
            beforeUpdatedAt INTEGER,
            beforeACL TEXT,
            beforeData TEXT,
            afterUpdatedAt INTEGER,
            afterACL TEXT,
            afterData TEXT
        );
        CREATE TABLE _live_trim (
            className TEXT PRIMARY KEY NOT NULL,
            seq INTEGER NOT NULL
        ) WITHOUT ROWID;
        """

    /// The highest `seq` ever given out (0 for none).
    static func head(in db: some SQLQuerying) throws -> Int64 {
        let rows = try db.fetchRows(
            "SELECT max(coalesce((SELECT max(seq) FROM _live_change), 0), coalesce((SELECT max(seq) FROM _live_trim), 0))",
            [], cacheable: false)
        return rows.first?.first?.integer ?? 0
    }

    /// Appends one change (inside the write's transaction).
    static func append(_ change: ObjectChange, at milliseconds: Int64, in db: any SQLConnection) throws {
        let version = change.after ?? change.before!
        try db.execute(
            "INSERT INTO _live_change (seq, className, at, objectId, createdAt, beforeUpdatedAt, beforeACL, beforeData, "
                + "afterUpdatedAt, afterACL, afterData) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [.integer(change.seq), .text(change.className), .integer(milliseconds), .text(version.objectId),
             .integer(version.createdAt)]
                + columns(of: change.before) + columns(of: change.after))
    }

    private static func columns(of row: StoredRow?) -> [SQLValue] {
        guard let row else { return [.null, .null, .null] }
        return [.integer(row.updatedAt), row.aclText.map(SQLValue.text) ?? .null, .text(row.dataText)]
    }

    /// What a resume may replay for `className` after `since`: nil when a change of the class after `since`
    /// was trimmed (or `since` is ahead of the log: another database's), else the class's changes in
    /// (`since`, `head`], in commit order. Read in one snapshot, so a trim cannot slip between the check and the read.
    /// - Parameter limit: more changes than this also answer nil (the client refreshes with `query` instead).
    static func changes(of className: String, after since: Int64, through head: Int64, limit: Int,
                        in db: some SQLQuerying) throws -> [ObjectChange]? {
        guard since <= head else { return nil }
        let trimmed = try db.fetchRows("SELECT seq FROM _live_trim WHERE className = ?", [.text(className)], cacheable: true)
        if let mark = trimmed.first?.first?.integer, mark > since { return nil }
        let rows = try db.fetchRows(
            "SELECT seq, objectId, createdAt, beforeUpdatedAt, beforeACL, beforeData, afterUpdatedAt, afterACL, afterData "
                + "FROM _live_change WHERE seq > ? AND seq <= ? AND className = ? ORDER BY seq LIMIT ?",
            [.integer(since), .integer(head), .text(className), .integer(Int64(limit) + 1)], cacheable: true)
        guard rows.count <= limit else { return nil }
        return rows.map { change(seq: $0[0].integer ?? 0, className: className, columns: Array($0[1...])) }
    }

    /// A logged change from its columns `objectId, createdAt, beforeUpdatedAt, beforeACL, beforeData, afterUpdatedAt,
    /// afterACL, afterData`.
    static func change(seq: Int64, className: String, columns row: [SQLValue]) -> ObjectChange {
        let objectId = row[0].text ?? "", createdAt = row[1].integer ?? 0
        func version(_ first: Int) -> StoredRow? {
            guard let data = row[first + 2].text else { return nil }
            return StoredRow(className: className, objectId: objectId, createdAt: createdAt,
                             updatedAt: row[first].integer ?? 0, aclText: row[first + 1].text, dataText: data)
        }
        return ObjectChange(seq: seq, className: className, before: version(2), after: version(5))
    }

    /// The most changes one `trim` drops.
    static let trimBatch = 10_000

    /// Drops the changes older than `windowMilliseconds` and all but the last `maxChanges` (at most `trimBatch`
    /// rows per call), raising each class's trim mark first. Returns how many were dropped.
    @discardableResult
    static func trim(head: Int64, windowMilliseconds: Int64, maxChanges: Int64, now: Int64,
                     in db: any SQLConnection) throws -> Int {
        guard let first = try db.fetchRows("SELECT min(seq) FROM _live_change", [], cacheable: true).first?.first?.integer else {
            return 0
        }
        // The first change young enough to stay, found by walking from the oldest: what it passes over is dropped.
        let young = try db.fetchRows("SELECT seq FROM _live_change WHERE at >= ? ORDER BY seq LIMIT 1",
                                     [.integer(now - windowMilliseconds)], cacheable: true).first?.first?.integer
        var cutoff = max((young ?? head + 1) - 1, head - maxChanges)
        cutoff = min(cutoff, first + Int64(trimBatch) - 1)
        guard cutoff >= first else { return 0 }
        try db.execute("""
            INSERT INTO _live_trim (className, seq) SELECT className, max(seq) FROM _live_change WHERE seq <= ? GROUP BY className
            ON CONFLICT (className) DO UPDATE SET seq = max(_live_trim.seq, excluded.seq)
            """, [.integer(cutoff)])
        try db.execute("DELETE FROM _live_change WHERE seq <= ?", [.integer(cutoff)])
        let dropped = db.changes
        // Other nodes' feeds read this log: one that had not reached `cutoff` learns it lost changes (`PostgresChangeFeed`).
        if db.dialect == .postgres { try raiseMark(of: PostgresChangeLog.trimmedMark, to: cutoff, in: db) }
        return dropped
    }

    /// Marks classes whose changes were not logged (not live) up to here: a resume from before this
    /// answers `resumed: false` for them. Returns the new head (`head + 1`, given to the marks).
    static func markUnlogged(_ classNames: [String], head: Int64, in db: any SQLConnection) throws -> Int64 {
        guard !classNames.isEmpty else { return head }
        for className in classNames { try raiseMark(of: className, to: head + 1, in: db) }
        return head + 1
    }

    /// How far a copied database's history jumps ahead (`startNewHistory`): more changes than a server makes
    /// between a copy and its clients' last resume.
    static let historyGap: Int64 = 1 << 32

    /// Starts the history of a copied database (`roost import`, a restored `roost backup`) past every `seq` the
    /// original can have given out since `head`, with every class marked trimmed up to there: a client's old
    /// `since` answers `resumed: false` (it refreshes) and never matches a change of the copy's own.
    /// The mark of `*` (no class has that name) carries the head when there is no class yet; `_Session` has no schema
    /// row but its changes are logged too (`SessionStore`).
    static func startNewHistory(after head: Int64, in db: any SQLConnection) throws {
        let start = max(head, try self.head(in: db)) + historyGap
        for className in try SchemaStore.all(in: db).map(\.className) + [SessionStore.className, "*"] {
            try raiseMark(of: className, to: start, in: db)
        }
    }

    /// Raises a class's trim mark: no resume from before `seq` (its changes up to there are not all in the log).
    static func raiseMark(of className: String, to seq: Int64, in db: any SQLConnection) throws {
        try db.execute("INSERT INTO _live_trim (className, seq) VALUES (?, ?) ON CONFLICT (className) DO UPDATE SET seq = max(_live_trim.seq, excluded.seq)",
                       [.text(className), .integer(seq)])
    }
}
