import Foundation
@testable import RoostServer
import RoostTestSupport
import Testing

/// The internal tables on PostgreSQL (`PostgresSchema`, `PostgresClassTable`): applied once, also by nodes starting
/// together, and the same shape as SQLite's after its migrations v1...v16
/// (but `_rows`, one row per table on SQLite and per write on PostgreSQL: `RowCount`, `PostgresRowCount`).
@Suite struct PostgresSchemaTests {
    @Test func migrationsApplyOnceAndRecordTheirVersions() throws {
        let scratch = try PostgresScratchDatabase()
        defer { scratch.drop() }
        let db = try scratch.connect()
        #expect(try PostgresSchema.migrate(db) == PostgresSchema.migrations.map(\.version))
        #expect(try PostgresSchema.migrate(db) == [])
        #expect(try db.fetchRows("SELECT version FROM _roost_migrations ORDER BY version", [], cacheable: false)
            == PostgresSchema.migrations.map { [.integer(Int64($0.version))] })
    }

    /// Four nodes start at the same moment: each migrates in its own transaction and thread. They queue on the
    /// advisory lock (seen waiting in pg_locks while a fifth session holds it), then one applies everything and the
    /// others find nothing left to do; all four succeed.
    @Test func nodesMigratingTogetherTakeTurns() async throws {
        let scratch = try PostgresScratchDatabase()
        defer { scratch.drop() }
        let holder = try scratch.connect()
        try holder.execute("BEGIN")
        try holder.query("SELECT pg_advisory_xact_lock($1)", [.int(PostgresSchema.lockKey)])
        let url = scratch.url
        let nodes = (0..<4).map { _ in
            Task.detached { try await onOwnThread { try PostgresSchema.migrate(try PostgresConnection(url: url)) } }
        }
        let deadline = Date().addingTimeInterval(20)
        var waiting: Int64 = 0
        while waiting < 4 && Date() < deadline {
            waiting = try holder.fetchRows(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                [], cacheable: false)[0][0].integer ?? 0
            if waiting < 4 { try await Task.sleep(nanoseconds: 20_000_000) }  // Not usleep: the nodes' tasks need this thread's pool.
        }
        #expect(waiting == 4)
        try holder.execute("COMMIT")
        var results: [[Int]] = []
        for node in nodes { results.append(try await node.value) }
        #expect(results.filter { !$0.isEmpty } == [PostgresSchema.migrations.map(\.version)], "\(results)")
        #expect(try holder.fetchRows("SELECT count(*) FROM _roost_migrations", [], cacheable: false)
            == [[.integer(Int64(PostgresSchema.migrations.count))]])
    }

    /// Every internal table and the sessions view have SQLite's columns, in order, with SQLite's NOT NULLs and types
    /// (INTEGER as bigint, TEXT as text); a class table has SQLite's columns after its `rowid`, `data` as jsonb.
    @Test func tablesHaveSQLiteShapes() throws {
        let scratch = try PostgresScratchDatabase()
        defer { scratch.drop() }
        let pg = try scratch.migrated()
        try SQLiteScratch.with { sqlite in
            let tables = try sqlite.fetchRows(
                "SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name LIKE '\\_%' ESCAPE '\\' ORDER BY name",
                [], cacheable: false).compactMap { $0[0].text }.filter { $0 != "_rows" }  // A shape of its own on each.
            #expect(tables == ["_account_token", "_config", "_hooks", "_idempotency", "_join", "_live_change", "_live_trim",
                               "_login_failure", "_mail_outbox", "_password", "_schema", "_session", "_session_objects"])
            for table in tables {
                let sqliteColumns = try SQLiteScratch.columns(of: table, in: sqlite)
                let postgresColumns = try Self.columns(of: table, in: pg)
                if table == "_session_objects" {  // A view's columns: names only (SQLite's have no declared types).
                    #expect(postgresColumns.map(\.name) == sqliteColumns.map(\.name), "\(table)")
                    continue
                }
                #expect(postgresColumns.map(\.name) == sqliteColumns.map(\.name), "\(table)")
                #expect(postgresColumns.map(\.type) == sqliteColumns.map(\.type), "\(table)")
                #expect(postgresColumns.map(\.notNull) == sqliteColumns.map(\.notNull), "\(table)")
            }
            let schema = try SchemaStore.create("GameScore", fields: [:], classLevelPermissions: nil, in: sqlite)
            let id = try #require(try pg.fetchRows("INSERT INTO _schema (className, fields) VALUES (?, ?) RETURNING id",
                                                   [.text("GameScore"), .text("{}")], cacheable: false).first?.first?.integer)
            for statement in PostgresClassTable.createStatements(table: "\"c\(id)\"", tableID: id) { try pg.execute(statement) }
            var classColumns = try Self.columns(of: "c\(id)", in: pg)
            #expect(classColumns.removeFirst() == Column(name: "rowid", type: "bigint", notNull: true))
            let sqliteClassColumns = try SQLiteScratch.columns(of: "c\(schema.id)", in: sqlite)
            #expect(classColumns.map(\.name) == sqliteClassColumns.map(\.name))
            #expect(classColumns.map(\.notNull) == sqliteClassColumns.map(\.notNull))
            #expect(classColumns.map(\.type) == ["text", "bigint", "bigint", "text", "text", "jsonb"])
            let indexes = try pg.fetchRows("SELECT indexname FROM pg_indexes WHERE tablename = ? ORDER BY indexname",
                                           [.text("c\(id)")], cacheable: false).compactMap { $0[0].text }
            #expect(indexes == ["c\(id)_objectid_key", "c\(id)_pkey", "c\(id)_restricted"])
        }
    }

    struct Column: Equatable {
        let name: String
        let type: String
        let notNull: Bool
    }

    static func columns(of table: String, in db: PostgresConnection) throws -> [Column] {
        try db.fetchRows("""
            SELECT column_name, data_type, is_nullable = 'NO' OR is_identity = 'YES' FROM information_schema.columns
            WHERE table_schema = 'public' AND table_name = ? ORDER BY ordinal_position
            """, [.text(table)], cacheable: false).map { Column(name: $0[0].text ?? "", type: $0[1].text ?? "", notNull: $0[2] == .integer(1)) }
    }
}

/// A data directory's SQLite database, migrated by `Storage`, on one writable connection.
enum SQLiteScratch {
    static func with(_ body: (SQLiteConnection) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-pgmirror-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("roost.sqlite").path
        try Storage(path: path).close()
        try body(try SQLiteConnection(path: path, readOnly: false, pragmas: SQLiteEngine.pragmas))
    }

    /// The columns as PostgreSQL names them (folded to lower case), INTEGER as bigint and TEXT as text; an INTEGER
    /// PRIMARY KEY (the rowid) counts as NOT NULL.
    static func columns(of table: String, in db: SQLiteConnection) throws -> [PostgresSchemaTests.Column] {
        try db.fetchRows("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?) ORDER BY cid", [.text(table)], cacheable: false).map { row in
            let type = row[1].text ?? ""
            return PostgresSchemaTests.Column(
                name: (row[0].text ?? "").lowercased(),
                type: type == "INTEGER" ? "bigint" : type == "TEXT" ? "text" : type.lowercased(),
                notNull: row[2] == .integer(1) || (type == "INTEGER" && row[3] == .integer(1)))
        }
    }
}
