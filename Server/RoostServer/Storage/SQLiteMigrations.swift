import CSQLite
import GRDB

/// The SQLite file's tables, version by version (GRDB's migrator).
extension SQLiteEngine {
    /// Process-wide SQLite settings, applied once before the first connection opens.
    static let configureSQLite: Void = { _ = roost_sqlite3_disable_memory_statistics() }()

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
            for id in try classTableIDs(db) {
                let table = "c\(id)"
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
        migrator.registerMigration("v15: counted class tables") { db in
            // See `RowCount`: each class table's rows, counted once here and kept by triggers from now on.
            try db.execute(sql: RowCount.tableSQL)
            for id in try classTableIDs(db) {
                try RowCount.install(tableID: id) { try db.execute(sql: $0) }
            }
        }
        migrator.registerMigration("v16: typed columns") { db in
            // PostgreSQL's generated columns behind declared indexes (`PostgresTypedColumns`), recorded with the
            // schema; always NULL here, kept so both databases' `_schema` have one shape.
            try db.execute(sql: "ALTER TABLE _schema ADD COLUMN typedColumns TEXT")
        }
        migrator.registerMigration("v17: sessions that never expire") { db in
            // A session started with `--no-expire-inactive-sessions` stores `SessionRecord.neverExpires` and shows
            // no `expiresAt`, as Parse's; the server's fields still replace the client's.
            try db.execute(sql: """
                DROP VIEW _session_objects;
                CREATE VIEW _session_objects AS
                SELECT objectId, createdAt, updatedAt, NULL AS acl, NULL AS rperm, userId,
                    json_patch(json_patch(json_patch(fields, json_object(
                        'user', json_object('__type', 'Pointer', 'className', '_User', 'objectId', userId),
                        'createdWith', json(createdWith))),
                        CASE WHEN expiresAt >= \(SessionRecord.neverExpires.millisecondsSince1970) THEN '{}'
                        ELSE json_object('expiresAt', json_object('__type', 'Date',
                            'iso', strftime('%Y-%m-%dT%H:%M:%fZ', expiresAt / 1000.0, 'unixepoch'))) END),
                        CASE WHEN installationId IS NULL THEN '{}' ELSE json_object('installationId', installationId) END) AS data
                FROM _session;
                """)
        }
        return migrator
    }

    /// The ids of the classes whose table `c<id>` exists (`_Session`'s rows live elsewhere).
    private static func classTableIDs(_ db: Database) throws -> [Int64] {
        try Int64.fetchAll(db, sql: "SELECT id FROM _schema").filter { id in
            try Bool.fetchOne(db, sql: "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = ?",
                              arguments: ["c\(id)"]) == true
        }
    }

}
