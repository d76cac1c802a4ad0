import CSQLite
import Foundation
import Dispatch
import GRDB
import RoostCore

/// Errors of the storage layer that are not the client's fault.
public enum StorageError: Error, CustomStringConvertible {
    case corruptRow(className: String, objectId: String)

    public var description: String {
        switch self {
        case .corruptRow(let className, let objectId): "stored row \(className)/\(objectId) does not decode"
        }
    }
}

/// The SQLite database in WAL mode: one writer with group commit (`WriteQueue`) and one read-only
/// connection per worker thread (`ReaderPool`). GRDB creates the file and runs the migrations.
///
/// A write closure runs atomically: when `write` returns, its changes are committed.
public final class Storage: Sendable {
    private let writer: WriteQueue
    private let readers: ReaderPool
    private let checkpointer: Checkpointer
    let sessions = SessionCache()
    private let schemas = SchemaCache()
    let triggerHooks = TriggerHookCache()
    /// Indexes made for the fields queries keep filtering or sorting on (off until `RoostServer` configures it).
    let autoIndexes = AutoIndexes()
    /// Signalled when a committed write queued a mail (`MailSender` waits on it).
    let mailQueued = Wakeup()
    /// Writes a request leaves behind it, run in order once it has been answered; `close()` waits for them.
    private let deferredWrites = DispatchQueue(label: "roost.deferred-writes")
    private let pendingDeferredWrites = DispatchGroup()
    private let deferredWaiting = WaitingCount()
    /// At most this many deferred writes wait (a flood of requests must not queue work without bound).
    static let maxDeferredWrites = 1_000

    /// Every pragma of the request connections in one place. With WAL, `synchronous=NORMAL` keeps
    /// commits atomic and durable across a process crash without an fsync per commit.
    static let pragmas = """
        PRAGMA synchronous = NORMAL;
        PRAGMA foreign_keys = ON;
        PRAGMA temp_store = MEMORY;
        PRAGMA cache_size = -4000;
        """

    /// How long one read may run before it stops with Parse's 124 (0: no limit).
    let queryTimeoutMilliseconds: UInt64

    /// Opens (creating if needed) the database file at `path` and brings its tables up to date.
    /// - Parameter queryTimeout: seconds one read may run (0: no limit).
    public convenience init(path: String, queryTimeout: Double = 5) throws {
        try self.init(path: path, walCatchUpFrames: Checkpointer.defaultCatchUpFrames, queryTimeout: queryTimeout)
    }

    /// - Parameter walCatchUpFrames: WAL size (in pages) past which the writer completes a checkpoint; see `Checkpointer`.
    /// - Parameter walIdleDelay: how long the WAL sits unchanged before it is truncated; see `Checkpointer`.
    init(path: String, walCatchUpFrames: Int64, queryTimeout: Double = 5,
         walIdleDelay: DispatchTimeInterval = Checkpointer.defaultIdleDelay) throws {
        queryTimeoutMilliseconds = UInt64(max(0, queryTimeout) * 1000)
        _ = Storage.configureSQLite
        let pool = try DatabasePool(path: path, configuration: Storage.migrationConfiguration)  // Also switches the file to WAL.
        try Storage.migrator.migrate(pool)
        try pool.close()
        // The Checkpointer checkpoints. The WAL restarts at ~64 MB under load (see `Checkpointer`). The backstop,
        // for when the low-priority Checkpointer gets no CPU or a long read holds the WAL: the commit that takes
        // it past 1.5 × the catch-up size (96 MB) restarts it, waiting for older reads (a read lasts at most the
        // query time limit), so it stays under 128 MB; the file is cut back to 128 MB when it starts over.
        let writerPragmas = Storage.pragmas + "PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = 134217728;"
        let writerConnection = try SQLiteConnection(path: path, readOnly: false, pragmas: writerPragmas)
        writerConnection.restartWAL(atFrames: Int32(clamping: Checkpointer.restartFrames(catchUpFrames: walCatchUpFrames)))
        try writerConnection.inTransaction(immediate: true) { try TextIndex.flushAll(in: writerConnection) }
        writer = WriteQueue(connection: writerConnection)
        readers = ReaderPool(path: path)
        checkpointer = try Checkpointer(path: path, writer: writer, catchUpFrames: walCatchUpFrames, idleDelay: walIdleDelay)
    }

    /// Process-wide SQLite settings, applied once before the first connection opens.
    private static let configureSQLite: Void = { _ = roost_sqlite3_disable_memory_statistics() }()

    /// GRDB's connection for the migrations. It knows `roost_text_words`: a migration rewriting objects' `data`
    /// fires the text indexes' triggers (`TextIndex`).
    static var migrationConfiguration: Configuration {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            db.add(function: DatabaseFunction("roost_text_words", argumentCount: 2, pure: true) { values in
                guard let value = String.fromDatabaseValue(values[0]) else { return nil }
                return TextIndex.storedWords(value, isArray: String.fromDatabaseValue(values[1]) == "array")
            })
            // What it stages stays staged (queries read it) until the server's writer flushes it at start.
            db.add(function: DatabaseFunction("roost_text_stage", argumentCount: 1) { _ in nil })
        }
        return configuration
    }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: schema table") { db in
            try db.execute(sql: """
                CREATE TABLE _schema (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    className TEXT NOT NULL UNIQUE,
                    fields TEXT NOT NULL,
                    classLevelPermissions TEXT,
                    indexes TEXT
                )
                """)
        }
        migrator.registerMigration("v2: sessions and password hashes") { db in
            // Users live in the ordinary `_User` class table; their password hashes and sessions
            // live here, where no object query can reach them.
            try db.execute(sql: """
                CREATE TABLE _session (
                    objectId TEXT PRIMARY KEY NOT NULL,
                    tokenHash TEXT NOT NULL UNIQUE,
                    userId TEXT NOT NULL,
                    createdAt INTEGER NOT NULL,
                    updatedAt INTEGER NOT NULL,
                    expiresAt INTEGER NOT NULL,
                    installationId TEXT,
                    createdWith TEXT NOT NULL
                );
                CREATE INDEX _session_user ON _session (userId);
                CREATE TABLE _password (
                    userId TEXT PRIMARY KEY NOT NULL,
                    hash TEXT NOT NULL
                );
                """)
        }
        migrator.registerMigration("v3: relations") { db in
            // Every Relation field's pairs, in one table: `owningClass.field` of `owningId` holds `relatedId`.
            try db.execute(sql: """
                CREATE TABLE _join (
                    owningClass TEXT NOT NULL,
                    field TEXT NOT NULL,
                    owningId TEXT NOT NULL,
                    relatedId TEXT NOT NULL,
                    PRIMARY KEY (owningClass, field, owningId, relatedId)
                ) WITHOUT ROWID;
                CREATE INDEX _join_related ON _join (owningClass, field, relatedId);
                """)
        }
        migrator.registerMigration("v4: idempotent requests") { db in
            try db.execute(sql: """
                CREATE TABLE _idempotency (
                    requestId TEXT PRIMARY KEY NOT NULL,
                    status INTEGER NOT NULL,
                    body TEXT NOT NULL,
                    location TEXT,
                    expiresAt INTEGER NOT NULL
                );
                CREATE INDEX _idempotency_expiry ON _idempotency (expiresAt);
                """)
        }
        migrator.registerMigration("v5: global config") { db in
            // Parse's `_GlobalConfig`: one row of parameters, and which of them only the master key may read.
            try db.execute(sql: """
                CREATE TABLE _config (
                    id INTEGER PRIMARY KEY CHECK (id = 1),
                    params TEXT NOT NULL,
                    masterKeyOnly TEXT NOT NULL
                );
                """)
        }
        migrator.registerMigration("v6: sessions as objects") { db in
            // `_session` rows in a class table's shape, so `GET /sessions` runs Parse queries on them;
            // `userId` stays a plain column so a user's own sessions are found through `_session_user`.
            try db.execute(sql: """
                CREATE VIEW _session_objects AS
                SELECT objectId, createdAt, updatedAt, NULL AS acl, NULL AS rperm, userId,
                    json_patch(json_object(
                        'user', json_object('__type', 'Pointer', 'className', '_User', 'objectId', userId),
                        'createdWith', json(createdWith),
                        'expiresAt', json_object('__type', 'Date',
                                                 'iso', strftime('%Y-%m-%dT%H:%M:%fZ', expiresAt / 1000.0, 'unixepoch'))),
                        CASE WHEN installationId IS NULL THEN '{}' ELSE json_object('installationId', installationId) END) AS data
                FROM _session;
                """)
        }
        migrator.registerMigration("v7: custom session fields") { db in
            // `POST /sessions` and `PUT /sessions/<id>` may carry fields of the client's own (a JSON
            // object); the view lays the server's fields over them, so none can be shadowed.
            try db.execute(sql: """
                ALTER TABLE _session ADD COLUMN fields TEXT NOT NULL DEFAULT '{}';
                DROP VIEW _session_objects;
                CREATE VIEW _session_objects AS
                SELECT objectId, createdAt, updatedAt, NULL AS acl, NULL AS rperm, userId,
                    json_patch(json_patch(fields, json_object(
                        'user', json_object('__type', 'Pointer', 'className', '_User', 'objectId', userId),
                        'createdWith', json(createdWith),
                        'expiresAt', json_object('__type', 'Date',
                                                 'iso', strftime('%Y-%m-%dT%H:%M:%fZ', expiresAt / 1000.0, 'unixepoch')))),
                        CASE WHEN installationId IS NULL THEN '{}' ELSE json_object('installationId', installationId) END) AS data
                FROM _session;
                """)
        }
        migrator.registerMigration("v8: webhooks") { db in
            // Parse's `_Hooks`: a Cloud Function by name, or a trigger of a class, served by a URL.
            try db.execute(sql: """
                CREATE TABLE _hooks (
                    functionName TEXT UNIQUE,
                    className TEXT,
                    triggerName TEXT,
                    url TEXT NOT NULL,
                    UNIQUE (className, triggerName),
                    CHECK ((functionName IS NULL) <> (className IS NULL))
                );
                """)
        }
        migrator.registerMigration("v9: installations by device token") { db in
            // Installations are looked up by deviceToken on every save; tables created before this
            // session's change have only the installationId index.
            if let id = try Int64.fetchOne(db, sql: "SELECT id FROM _schema WHERE className = '_Installation'") {
                try db.execute(sql: "CREATE INDEX IF NOT EXISTS \"c\(id)_deviceToken\" ON \"c\(id)\" (json_extract(data, '$.deviceToken'))")
            }
        }
        migrator.registerMigration("v10: idempotency records bound to their request") { db in
            // A record now names the request that made it (see `Idempotency.Fingerprint`). Records from before
            // stay unbound until they expire, except those holding a session token in plain text: dropped, and
            // their pages zeroed (`secure_delete`) so the token is not left in the file's free space either.
            try db.execute(sql: """
                PRAGMA secure_delete = ON;
                CREATE TABLE _idempotency_bound (
                    requestId TEXT PRIMARY KEY NOT NULL,
                    fingerprint TEXT,
                    status INTEGER NOT NULL,
                    body TEXT,
                    location TEXT,
                    expiresAt INTEGER NOT NULL
                );
                INSERT INTO _idempotency_bound (requestId, status, body, location, expiresAt)
                    SELECT requestId, status, body, location, expiresAt FROM _idempotency
                    WHERE instr(body, '"sessionToken"') = 0;
                DROP TABLE _idempotency;
                ALTER TABLE _idempotency_bound RENAME TO _idempotency;
                CREATE INDEX _idempotency_expiry ON _idempotency (expiresAt);
                PRAGMA secure_delete = OFF;
                """)
        }
        migrator.registerMigration("v11: LiveQuery change log") { db in
            try db.execute(sql: ChangeLog.schemaSQL)
        }
        migrator.registerMigration("v12: accounts and mail") { db in
            // Out of reach of object queries, as `_password`: the password policy's record of each password
            // (when it was set, the hashes it replaced), failed log-ins for the lockout, the hashes of emailed
            // links' tokens, and the mails waiting for the SMTP server (`MailOutbox`).
            try db.execute(sql: """
                ALTER TABLE _password ADD COLUMN changedAt INTEGER;
                ALTER TABLE _password ADD COLUMN history TEXT NOT NULL DEFAULT '[]';
                CREATE TABLE _login_failure (
                    userId TEXT PRIMARY KEY NOT NULL,
                    failedCount INTEGER NOT NULL,
                    lockedUntil INTEGER
                );
                CREATE TABLE _account_token (
                    tokenHash TEXT PRIMARY KEY NOT NULL,
                    userId TEXT NOT NULL,
                    purpose TEXT NOT NULL,
                    expiresAt INTEGER
                );
                CREATE INDEX _account_token_user ON _account_token (userId, purpose);
                CREATE TABLE _mail_outbox (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    recipient TEXT NOT NULL,
                    message TEXT NOT NULL,
                    attempts INTEGER NOT NULL DEFAULT 0,
                    nextAttemptAt INTEGER NOT NULL,
                    createdAt INTEGER NOT NULL
                );
                CREATE INDEX _mail_outbox_due ON _mail_outbox (nextAttemptAt);
                """)
        }
        migrator.registerMigration("v13: indexable read permission") { db in
            // See `ReadPermission`: public rows' `rperm` becomes NULL, restricted rows get their own index,
            // and declared indexes end with `rperm`.
            for id in try Int64.fetchAll(db, sql: "SELECT id FROM _schema") {
                let table = "c\(id)"
                guard try Bool.fetchOne(db, sql: "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?",
                                        arguments: [table]) == true else { continue }
                try ReadPermission.migrate(
                    table: "\"\(table)\"", tableID: id, execute: { try db.execute(sql: $0) },
                    indexes: {
                        try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
                                         arguments: [table]).map { ($0["name"], $0["sql"]) }
                    })
            }
        }
        migrator.registerMigration("v14: when account tokens were issued") { db in
            // A link asked for again soon after the last queues no mail (`AccountMail`); earlier tokens: NULL, not recent.
            try db.execute(sql: "ALTER TABLE _account_token ADD COLUMN issuedAt INTEGER")
        }
        return migrator
    }

    /// LiveQuery's hook: object writes of the classes `records` names are numbered, appended to the change log
    /// when `logging`, and handed to `onCommit` once committed, in commit order (see `WriteQueue.observeCommits`).
    /// With the log, classes already stored that are not recorded get a trim mark (their changes are not logged).
    /// Set once, before serving. Returns the log's head: the last `seq` given out.
    func observeCommits(logging: Bool, records: @escaping @Sendable (String) -> Bool,
                        onCommit: @escaping @Sendable ([ObjectChange]) -> Void) throws -> Int64 {
        let head = try writer.withConnection { db -> Int64 in
            let head = try ChangeLog.head(in: db)
            guard logging else { return head }
            // `_Session` has no `_schema` row (its rows live in `_session`) and is recorded too (`SessionStore`).
            let classes = try db.fetchRows("SELECT className FROM _schema", [], cacheable: false).compactMap { $0.first?.text }
                + [SessionStore.className]
            return try db.inTransaction(immediate: true) { try ChangeLog.markUnlogged(classes.filter { !records($0) }, head: head, in: db) }
        }
        try writer.observeCommits(with: ChangeRecorder(head: head, logs: logging, records: records), onCommit: onCommit)
        return head
    }

    /// Trims the change log to `windowSeconds` and `maxChanges` (see `ChangeLog.trim`); returns how many were dropped.
    @discardableResult
    func trimChangeLog(windowSeconds: Int, maxChanges: Int) throws -> Int {
        try write { db in
            guard let head = db.changeRecorder?.head else { return 0 }
            return try ChangeLog.trim(head: head, windowMilliseconds: Int64(windowSeconds) * 1000, maxChanges: Int64(maxChanges),
                                      now: Int64(Date().timeIntervalSince1970 * 1000), in: db)
        }
    }

    /// Runs `body` atomically on the writer; returns once its changes are committed.
    func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        var changedAuthentication = false
        var changedSchema = false
        var queuedMail = false
        let result = try writer.write { db in
            db.changedAuthentication = false
            db.changedSchema = false
            db.queuedMail = false
            let value = try body(db)
            changedAuthentication = db.changedAuthentication
            changedSchema = db.changedSchema
            queuedMail = db.queuedMail
            return value
        }
        // After the commit: see `SessionCache` and `SchemaCache`.
        if changedAuthentication { sessions.invalidate() }
        if changedSchema { schemas.invalidate() }
        if queuedMail { mailQueued.signal() }
        return result
    }

    /// Runs `body` on the calling thread's read connection, in one snapshot of the last commit, within
    /// the query time limit: past it, or at shutdown, it stops and throws Parse's 124.
    func read<T>(_ body: (any SQLQuerying) throws -> T) throws -> T {
        let reader = try readers.reader()
        // Noted before the snapshot begins (the first statement after the deferred BEGIN).
        reader.readerSchemas = (schemas, schemas.currentGeneration)
        let timed = reader.budget.begin(milliseconds: queryTimeoutMilliseconds)
        defer {
            reader.readerSchemas = nil
            if timed { reader.budget.end() }
        }
        do {
            return try reader.inTransaction { try body(reader) }
        } catch let error as SQLiteError where error.code & 0xff == SQLITE_INTERRUPT {
            if reader.budget.regexGaveUp {
                throw ParseError(.invalidQuery, "$regex took too long: the pattern backtracks too much on a stored value")
            }
            throw ParseError(.timeout, "The query took longer than the time limit (--query-timeout)")
        }
    }

    /// Stops every read in progress and any later one (shutdown: nothing waits for a slow query).
    func interruptReads() { readers.interruptAll() }

    /// Runs `work` (which writes) on a queue of its own 100 ms from now, when the caller's answer has gone out
    /// (started at once, it competed with sending that answer: measurably slower replies); `close()` waits for it.
    /// - Returns: false, queuing nothing, when `maxDeferredWrites` already wait: the caller does the work itself.
    func deferWrite(_ work: @escaping @Sendable () -> Void) -> Bool {
        guard deferredWaiting.add(below: Storage.maxDeferredWrites) else { return false }
        pendingDeferredWrites.enter()
        deferredWrites.asyncAfter(deadline: .now() + .milliseconds(100)) { [pendingDeferredWrites, deferredWaiting] in
            work()
            deferredWaiting.remove()
            pendingDeferredWrites.leave()
        }
        return true
    }

    /// Checkpoints the WAL into the database file and closes every connection. No request may be running.
    public func close() throws {
        pendingDeferredWrites.wait()  // The deferred writes first, while the writer is open.
        checkpointer.stop()
        readers.close()
        try writer.withConnection { try $0.execute("PRAGMA wal_checkpoint(TRUNCATE)", cacheable: false) }
    }
}

/// A count of waiting work, bounded by its callers.
private final class WaitingCount: @unchecked Sendable {  // `value` only under `lock`.
    private let lock = NSLock()
    private var value = 0

    /// Counts one more unless `limit` already wait; whether it did.
    func add(below limit: Int) -> Bool {
        lock.withLock {
            guard value < limit else { return false }
            value += 1
            return true
        }
    }

    func remove() { lock.withLock { value -= 1 } }
}
