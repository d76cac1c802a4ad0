import Foundation
import RoostCore
@testable import RoostServer
import RoostTestSupport
import Testing

/// The stores' SQL on both databases: the same text, the same answers, the same error classification, and on
/// PostgreSQL the built-in classes' fixed indexes answer the stores' lookups (EXPLAIN).
@Suite struct PostgresSharedSQLTests {
    /// Both databases migrated, with a `_User` table made as each makes it (`UserStore.schema` on SQLite,
    /// `PostgresClassTable` on PostgreSQL); `{T}` in SQL stands for that table.
    struct Pair {
        let sqlite: SQLiteConnection
        let sqliteUsers: String
        let pg: PostgresConnection
        let pgUsers: String

        func both(_ sql: String, _ arguments: [SQLValue] = []) throws -> [[SQLValue]] {
            let onSQLite = try sqlite.fetchRows(sql.replacingOccurrences(of: "{T}", with: sqliteUsers), arguments, cacheable: true)
            let onPostgres = try pg.fetchRows(sql.replacingOccurrences(of: "{T}", with: pgUsers), arguments, cacheable: true)
            #expect(onSQLite == onPostgres, "\(sql)")
            return onPostgres
        }

        /// The error each database throws for `sql`, as (primary key, unique) violation.
        func failures(_ sql: String, _ arguments: [SQLValue]) -> (sqlite: [Bool], pg: [Bool]) {
            var sqliteKinds: [Bool] = [], pgKinds: [Bool] = []
            do { _ = try sqlite.fetchRows(sql.replacingOccurrences(of: "{T}", with: sqliteUsers), arguments, cacheable: true) } catch let error as SQLiteError {
                sqliteKinds = [error.isPrimaryKeyViolation, error.isUniqueViolation]
            } catch { sqliteKinds = [false, false] }
            do { _ = try pg.fetchRows(sql.replacingOccurrences(of: "{T}", with: pgUsers), arguments, cacheable: true) } catch let error as PostgresError {
                pgKinds = [error.isPrimaryKeyViolation, error.isUniqueViolation]
            } catch { pgKinds = [false, false] }
            return (sqliteKinds, pgKinds)
        }
    }

    func withPair(_ body: (Pair) throws -> Void) throws {
        let scratch = try PostgresScratchDatabase()
        defer { scratch.drop() }
        let pg = try scratch.migrated()
        let pgUsers = try Self.createClass("_User", in: pg)
        try SQLiteScratch.with { sqlite in
            let users = try UserStore.schema(in: sqlite)
            try body(Pair(sqlite: sqlite, sqliteUsers: users.tableName, pg: pg, pgUsers: pgUsers))
        }
    }

    /// What `SchemaStore.create` and the built-in class's store do, on PostgreSQL. Returns the table's name.
    static func createClass(_ className: String, in db: PostgresConnection) throws -> String {
        let id = try #require(try db.fetchRows("INSERT INTO _schema (className, fields) VALUES (?, ?) RETURNING id",
                                               [.text(className), .text("{}")], cacheable: true).first?.first?.integer)
        let table = "\"c\(id)\""
        for statement in PostgresClassTable.createStatements(table: table, tableID: id)
            + PostgresClassTable.fixedIndexStatements(className: className, table: table, tableID: id) {
            try db.execute(statement, [], cacheable: false)
        }
        return table
    }

    static let insertObject = "INSERT INTO {T} (objectId, createdAt, updatedAt, acl, rperm, data) VALUES (?, ?, ?, ?, ?, ?)"

    static func user(_ id: String, _ username: String, rperm: String? = nil, acl: String? = nil) -> [SQLValue] {
        [.text(id), .integer(1_795_687_200_123), .integer(1_795_687_200_123), acl.map(SQLValue.text) ?? .null,
         rperm.map(SQLValue.text) ?? .null,
         .text(#"{"username":"\#(username)","email":"\#(username.lowercased())@example.org","authData":{"anonymous":{"id":"anon-\#(id)"}},"name":"x"}"#)]
    }

    @Test func constraintErrorsClassifyAlike() throws {
        try withPair { pair in
            _ = try pair.both(Self.insertObject, Self.user("u1", "Sean"))
            let cases: [(String, String, [SQLValue])] = [
                ("duplicate objectId (UNIQUE column)", Self.insertObject, Self.user("u1", "Other")),
                ("username differing in case (unique expression index)", Self.insertObject, Self.user("u2", "SEAN")),
                ("duplicate idempotency request (PRIMARY KEY)",
                 "INSERT INTO _idempotency (requestId, fingerprint, status, body, location, expiresAt) VALUES (?, NULL, 201, '{}', NULL, 9)",
                 [.text("r1")]),
                ("duplicate session token hash (UNIQUE column)",
                 "INSERT INTO _session (objectId, tokenHash, userId, createdAt, updatedAt, expiresAt, installationId, createdWith) VALUES (?, 'h1', 'u1', 0, 0, 0, NULL, '{}')",
                 [.text("s2")]),
                ("duplicate session objectId (PRIMARY KEY)",
                 "INSERT INTO _session (objectId, tokenHash, userId, createdAt, updatedAt, expiresAt, installationId, createdWith) VALUES ('s1', ?, 'u1', 0, 0, 0, NULL, '{}')",
                 [.text("h9")]),
                ("duplicate function webhook (UNIQUE column)", "INSERT INTO _hooks (functionName, url) VALUES (?, 'http://a')", [.text("f")]),
                ("duplicate trigger webhook (UNIQUE pair)", "INSERT INTO _hooks (className, triggerName, url) VALUES ('A', ?, 'http://a')", [.text("beforeSave")]),
                ("a NOT NULL column left NULL", "INSERT INTO _password (userId, hash) VALUES (?, NULL)", [.text("u9")]),
            ]
            _ = try pair.both("INSERT INTO _idempotency (requestId, fingerprint, status, body, location, expiresAt) VALUES (?, NULL, 201, '{}', NULL, 9)", [.text("r1")])
            _ = try pair.both("INSERT INTO _session (objectId, tokenHash, userId, createdAt, updatedAt, expiresAt, installationId, createdWith) VALUES ('s1', 'h1', 'u1', 0, 0, 0, NULL, '{}')")
            _ = try pair.both("INSERT INTO _hooks (functionName, url) VALUES ('f', 'http://a')")
            _ = try pair.both("INSERT INTO _hooks (className, triggerName, url) VALUES ('A', 'beforeSave', 'http://a')")
            let expected: [[Bool]] = [[false, true], [false, true], [true, false], [false, true], [true, false], [false, true], [false, true], [false, false]]
            for ((name, sql, arguments), kinds) in zip(cases, expected) {
                let (sqlite, pg) = pair.failures(sql, arguments)
                #expect(sqlite == kinds, "SQLite: \(name)")
                #expect(pg == kinds, "PostgreSQL: \(name)")
            }
        }
    }

    /// The statements the stores run (or, where SQLite's text cannot run on PostgreSQL, the shared text proposed for
    /// them), with the same answers on both.
    @Test func storeStatementsAnswerAlike() throws {
        try withPair { pair in
            for (id, name, rperm) in [("u1", "Sean", nil), ("u2", "Ada", #"["u2"]"#), ("u3", "Lin", #"["role:Staff","u3"]"#)] {
                _ = try pair.both(Self.insertObject, Self.user(id, name, rperm: rperm, acl: rperm == nil ? nil : "{}"))
            }
            // UserStore's lookups, as written.
            #expect(try pair.both("SELECT objectId FROM {T} WHERE lower(json_extract(data, '$.username')) = lower(?) AND objectId != ?",
                                  [.text("sEaN"), .text("")]) == [[.text("u1")]])
            #expect(try pair.both("SELECT objectId, createdAt, acl FROM {T} WHERE lower(json_extract(data, '$.email')) = lower(?) AND json_extract(data, '$.email') = ?",
                                  [.text("ada@example.org"), .text("ada@example.org")]) == [[.text("u2"), .integer(1_795_687_200_123), .text("{}")]])
            // `ORDER BY acl IS '{}'` → IS NOT DISTINCT FROM (PostgreSQL's IS takes only NULL, TRUE, FALSE).
            #expect(try pair.both("SELECT objectId FROM {T} WHERE json_extract(data, '$.authData.anonymous.id') IN (?, ?) ORDER BY acl IS NOT DISTINCT FROM '{}'",
                                  [.text("anon-u1"), .text("anon-u2")]) == [[.text("u1")], [.text("u2")]])
            // ReadPermission: `instr(rperm, ?)` as a truth value → `instr(rperm, ?) > 0`.
            #expect(try pair.both("SELECT objectId FROM {T} WHERE rperm IS NULL OR instr(rperm, ?) > 0 ORDER BY objectId",
                                  [.text(#""u3""#)]) == [[.text("u1")], [.text("u3")]])
            #expect(try pair.both("SELECT (SELECT COUNT(*) FROM {T}) - (SELECT COUNT(*) FROM {T} WHERE rperm IS NOT NULL AND NOT (instr(rperm, ?) > 0 OR instr(rperm, ?) > 0))",
                                  [.text(#""u9""#), .text(#""role:Staff""#)]) == [[.integer(2)]])
            // ObjectStore's fetch of several, and the creation order AggregationPlan reads by.
            #expect(try pair.both("SELECT objectId FROM {T} WHERE objectId IN (SELECT value FROM json_each(?)) ORDER BY rowid",
                                  [.text(#"["u3","u1","zz"]"#)]) == [[.text("u1")], [.text("u3")]])
            // SchemaRoutes' field deletion.
            _ = try pair.both("UPDATE {T} SET data = json_remove(data, '$.name')")
            #expect(try pair.both("SELECT count(*) FROM {T} WHERE json_extract(data, '$.name') IS NULL") == [[.integer(3)]])
            #expect(try pair.both("SELECT json_extract(data, '$.authData.anonymous.id') FROM {T} WHERE objectId = ?", [.text("u3")]) == [[.text("anon-u3")]])

            // RelationStore's marker of a new Relation field, as written.
            _ = try pair.both("UPDATE {T} SET data = json_set(data, '$.friends', json(?))", [.text(#"{"__type":"Relation","className":"_User"}"#)])
            #expect(try pair.both("SELECT DISTINCT json_extract(data, '$.friends.className') FROM {T}") == [[.text("_User")]])

            // RelationStore: INSERT OR IGNORE → ON CONFLICT DO NOTHING (both read it).
            let relate = "INSERT INTO _join (owningClass, field, owningId, relatedId) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING"
            for expectedChanges in [1, 0] {
                _ = try pair.both(relate, [.text("_Role"), .text("users"), .text("r1"), .text("u1")])
                #expect(pair.sqlite.changes == expectedChanges && pair.pg.changes == expectedChanges)
            }
            // UserStore, ConfigRoutes upserts as written (ConfigRoutes' numbered marks).
            for hash in ["h1", "h2"] {
                _ = try pair.both("INSERT INTO _password (userId, hash) VALUES (?, ?) ON CONFLICT (userId) DO UPDATE SET hash = excluded.hash",
                                  [.text("u1"), .text(hash)])
            }
            #expect(try pair.both("SELECT hash, history, changedAt FROM _password WHERE userId = ?", [.text("u1")]) == [[.text("h2"), .text("[]"), .null]])
            for params in [#"{"a":1}"#, #"{"a":2}"#] {
                _ = try pair.both("INSERT INTO _config (id, params, masterKeyOnly) VALUES (1, ?1, ?2) ON CONFLICT (id) DO UPDATE SET params = ?1, masterKeyOnly = ?2",
                                  [.text(params), .text("{}")])
            }
            #expect(try pair.both("SELECT params, masterKeyOnly FROM _config WHERE id = 1") == [[.text(#"{"a":2}"#), .text("{}")]])

            // ChangeLog: `max(seq, excluded.seq)` → the target's column qualified (PostgreSQL finds `seq` ambiguous).
            for seq in [5, 3, 9] {
                _ = try pair.both("INSERT INTO _live_trim (className, seq) VALUES (?, ?) ON CONFLICT (className) DO UPDATE SET seq = max(_live_trim.seq, excluded.seq)",
                                  [.text("GameScore"), .integer(Int64(seq))])
            }
            #expect(try pair.both("SELECT max(coalesce((SELECT max(seq) FROM _live_change), 0), coalesce((SELECT max(seq) FROM _live_trim), 0))") == [[.integer(9)]])
            #expect(try pair.both("SELECT max(1, NULL), min(4, 2)") == [[.null, .integer(2)]])

            // SchemaStore and MailOutbox: the new row's id by RETURNING (lastInsertedRowID has no PostgreSQL twin).
            #expect(try pair.both("INSERT INTO _mail_outbox (recipient, message, nextAttemptAt, createdAt) VALUES (?, ?, ?, ?) RETURNING id",
                                  [.text("a@example.org"), .text("m"), .integer(1), .integer(1)]) == [[.integer(1)]])
            #expect(try pair.both("SELECT id, recipient, message, attempts, createdAt FROM _mail_outbox WHERE nextAttemptAt <= ? ORDER BY id LIMIT ?",
                                  [.integer(5), .integer(10)]) == [[.integer(1), .text("a@example.org"), .text("m"), .integer(0), .integer(1)]])

            // Sessions as objects: the view's `data` is the same JSON on both.
            _ = try pair.both("INSERT INTO _session (objectId, tokenHash, userId, createdAt, updatedAt, expiresAt, installationId, createdWith, fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                              [.text("s1"), .text("hash"), .text("u1"), .integer(1), .integer(2), .integer(1_795_687_200_123), .text("inst"),
                               .text(#"{"action":"login","authProvider":"password"}"#), .text(#"{"device":"phone"}"#)])
            let sqliteData = try pair.sqlite.fetchRows("SELECT data, createdAt, acl FROM _session_objects WHERE objectId = ?", [.text("s1")], cacheable: true)
            let pgData = try pair.pg.fetchRows("SELECT data, createdAt, acl FROM _session_objects WHERE objectId = ?", [.text("s1")], cacheable: true)
            #expect(try JSONParser.parse(sqliteData[0][0].text ?? "") == JSONParser.parse(pgData[0][0].text ?? ""))
            #expect(try JSONParser.parse(pgData[0][0].text ?? "")["expiresAt"]?["iso"] == .string("2026-11-26T10:00:00.123Z"))
            #expect(Array(sqliteData[0].dropFirst()) == Array(pgData[0].dropFirst()))
        }
    }

    /// The fixed indexes answer the stores' lookups as the stores write them: the planner inlines `json_extract`.
    @Test func fixedIndexesAnswerTheStoresLookups() throws {
        let scratch = try PostgresScratchDatabase()
        defer { scratch.drop() }
        let db = try scratch.migrated()
        let users = try Self.createClass("_User", in: db)
        let roles = try Self.createClass("_Role", in: db)
        let installations = try Self.createClass("_Installation", in: db)
        try db.execute("""
            INSERT INTO \(users) (objectId, createdAt, updatedAt, data) SELECT 'u' || g, 0, 0, jsonb_build_object('username', 'User' || g,
                'email', 'user' || g || '@example.org', 'authData', jsonb_build_object('anonymous', jsonb_build_object('id', 'anon' || g)))
                FROM generate_series(1, 3000) AS g;
            INSERT INTO \(roles) (objectId, createdAt, updatedAt, data) SELECT 'r' || g, 0, 0, jsonb_build_object('name', 'Role' || g)
                FROM generate_series(1, 3000) AS g;
            INSERT INTO \(installations) (objectId, createdAt, updatedAt, data) SELECT 'i' || g, 0, 0,
                jsonb_build_object('installationId', 'inst' || g, 'deviceToken', 'tok' || g) FROM generate_series(1, 3000) AS g;
            INSERT INTO _session (objectId, tokenHash, userId, createdAt, updatedAt, expiresAt, createdWith)
                SELECT 's' || g, md5(g::text), 'u' || g, 0, 0, 0, '{}' FROM generate_series(1, 3000) AS g;
            ANALYZE;
            """)
        let id = { (table: String) in table.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        let lookups: [(sql: String, arguments: [SQLValue], index: [String], rows: Int)] = [
            ("SELECT objectId FROM \(users) WHERE lower(json_extract(data, '$.username')) = lower(?) AND objectId != ?",
             [.text("USER17"), .text("")], ["\(id(users))_username"], 1),
            ("SELECT objectId, createdAt, updatedAt, acl, data FROM \(users) WHERE lower(json_extract(data, '$.email')) = lower(?) AND json_extract(data, '$.email') = ?",
             [.text("user17@example.org"), .text("user17@example.org")], ["\(id(users))_email"], 1),
            ("SELECT objectId, createdAt, updatedAt, acl, data FROM \(users) WHERE json_extract(data, '$.authData.anonymous.id') = ? ORDER BY acl IS NOT DISTINCT FROM '{}'",
             [.text("anon17")], ["\(id(users))_anonymous"], 1),
            ("SELECT objectId FROM \(roles) WHERE json_extract(data, '$.name') = ?", [.text("Role17")], ["\(id(roles))_name"], 1),
            ("""
             SELECT objectId, json_extract(data, '$.installationId'), json_extract(data, '$.deviceToken') FROM \(installations)
             WHERE objectId = ?1 OR json_extract(data, '$.installationId') = ?2 OR json_extract(data, '$.deviceToken') = ?3
             """, [.text("i1"), .text("inst2"), .text("tok3")],
             ["\(id(installations))_objectid_key", "\(id(installations))_installationId", "\(id(installations))_deviceToken"], 3),
            ("SELECT objectId FROM _session WHERE tokenHash = ?", [.text("c81e728d9d4c2f636f067f89cc14862c")], ["_session_tokenhash_key"], 1),
            ("SELECT objectId FROM _session WHERE userId = ?", [.text("u2")], ["_session_user"], 1),
        ]
        for lookup in lookups {
            // As the stores run them: prepared once, so the plan is PostgreSQL's generic one after five runs.
            for _ in 0..<6 { #expect(try db.fetchRows(lookup.sql, lookup.arguments, cacheable: true).count == lookup.rows, "\(lookup.sql)") }
            let plan = try db.fetchRows("EXPLAIN " + lookup.sql, lookup.arguments, cacheable: false).compactMap { $0[0].text }.joined(separator: "\n")
            for index in lookup.index { #expect(plan.contains(index), "\(lookup.sql)\n\(plan)") }
            #expect(!plan.contains("Seq Scan"), "\(plan)")
        }
    }
}
