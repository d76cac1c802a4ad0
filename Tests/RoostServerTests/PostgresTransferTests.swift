import Foundation
import RoostCore
@testable import RoostServer
import Testing

/// `roost export` and `roost import` with `--database-url`: an app moved from SQLite to PostgreSQL and back, served
/// the same by a real server on each, and `roost backup`'s refusal of a PostgreSQL database.
@Suite struct PostgresTransferTests {
    static func roost(_ arguments: [String]) throws -> (status: Int32?, output: String) {
        try CommandLineTests.run(arguments)
    }

    /// Where a test server's data is, as the transfer commands take it.
    static func source(_ server: TestServer) -> [String] {
        server.postgres.map { ["--database-url", $0.url] } ?? ["--data-dir", server.dataDirectory.path]
    }

    @Test func anAppMovesFromSQLiteToPostgresAndBackUnchanged() async throws {
        let app = try await TransferCommandTests.makeApp()
        let fromSQLite = CommandLineTests.freshPath() + ".jsonl"
        let fromPostgres = CommandLineTests.freshPath() + ".jsonl"
        let fromSQLiteAgain = CommandLineTests.freshPath() + ".jsonl"
        defer { for path in [fromSQLite, fromPostgres, fromSQLiteAgain] { unlink(path) } }
        let exported = try Self.roost(["export"] + Self.source(app.server.server) + ["--out", fromSQLite])
        #expect(exported.status == 0, "\(exported.output)")

        // Into a new PostgreSQL database, and out again: the same records.
        let database = try PostgresScratchDatabase()
        defer { database.drop() }
        let imported = try Self.roost(["import", "--database-url", database.url, fromSQLite])
        #expect(imported.status == 0, "\(imported.output)")
        #expect(imported.output.contains("Imported") && imported.output.contains("into the PostgreSQL database"), "\(imported.output)")
        #expect(!imported.output.contains(try #require(URL(string: database.url)?.password)), "no password in the output")
        // The import ends with ANALYZE: the class tables have planner statistics (`reltuples` is -1 until then).
        let statistics = try PostgresConnection(url: database.url).fetchRows(
            "SELECT count(*), count(*) FILTER (WHERE reltuples < 0) FROM pg_class WHERE relkind = 'r' AND relname ~ '^c[0-9]+$'",
            [], cacheable: false)
        #expect((statistics.first?[0].integer ?? 0) > 0 && statistics.first?[1].integer == 0, "\(statistics)")
        let second = try Self.roost(["export", "--database-url", database.url, "--out", fromPostgres])
        #expect(second.status == 0, "\(second.output)")
        let original = try TransferCommandTests.records(fromSQLite), copied = try TransferCommandTests.records(fromPostgres)
        #expect(copied.count == original.count)
        for (a, b) in zip(original, copied) where a != b { Issue.record("differs:\n\(a.jsonText.prefix(400))\n\(b.jsonText.prefix(400))") }

        // A server on the copy serves the same app.
        let copy = RecordingServer(server: try TestServer(arguments: fastHashing + ["--database-url", database.url], onPostgres: false))
        try await Self.expectSameApp(copy, as: app)

        // And back, PostgreSQL to SQLite: the same records again.
        let target = CommandLineTests.freshPath()
        defer { try? FileManager.default.removeItem(atPath: target) }
        let back = try Self.roost(["import", "--data-dir", target, fromPostgres])
        #expect(back.status == 0, "\(back.output)")
        #expect(try Self.roost(["export", "--data-dir", target, "--out", fromSQLiteAgain]).status == 0)
        #expect(try TransferCommandTests.records(fromSQLiteAgain) == original)
        // On that SQLite file even in the PostgreSQL pass (whose servers otherwise get a database of their own).
        let onTarget = try TestServer(arguments: fastHashing, dataDirectory: URL(fileURLWithPath: target), onPostgres: false)
        try await Self.expectSameApp(RecordingServer(server: onTarget), as: app)

        // Over the app now in PostgreSQL (its server still running): refused, naming the database without its password.
        let over = try Self.roost(["import", "--database-url", database.url, fromSQLite])
        #expect(over.status == 1)
        #expect(over.output.contains("the database roost@") && over.output.contains("/\(database.name) already holds an app"), "\(over.output)")
        #expect(!over.output.contains(try #require(URL(string: database.url)?.password)))
    }

    /// What `TransferCommandTests` checks of a copy: users (password and old session token), ACL, relation, role,
    /// schema, config, webhook and file.
    static func expectSameApp(_ copy: RecordingServer, as app: TransferCommandTests.App) async throws {
        #expect(try await copy.logIn("alice", "alice-password").id == app.alice.id)
        #expect(try await copy.me(app.alice.token).json["username"] == "alice")
        expectError(try await copy.send("POST", "/users", json: ["username": "ALICE", "password": "x"]), 202)
        let item = try await copy.send("GET", "/classes/Item/\(app.itemId)", token: app.alice.token)
        #expect(item.status == 200 && item.json["title"] == "private" && item.json["n"] == nil, "n is a protected field: \(item.text)")
        #expect(item.json["due"]?["iso"] == "2026-01-02T03:04:05.678Z")
        #expect(try await copy.send("GET", "/classes/Item/\(app.itemId)").status == 404, "the ACL still keeps others out")
        let watchers = try await copy.send("GET", "/users", master: true, query: [
            "where": #"{"$relatedTo":{"object":{"__type":"Pointer","className":"Item","objectId":"\#(app.itemId)"},"key":"watchers"}}"#,
        ])
        #expect(watchers.json["results"]?.arrayValue?.compactMap { $0["username"]?.stringValue } == ["bob"])
        let roles = try await copy.send("GET", "/roles", query: ["where": #"{"name":"editors"}"#])
        #expect(roles.json["results"]?.arrayValue?.count == 1)
        let schema = try await copy.send("GET", "/schemas/Item", master: true)
        #expect(schema.json["indexes"]?["by_n"] == ["n": 1])
        #expect(try await copy.send("GET", "/config").json["params"]?["motd"] == "hello")
        #expect(try await copy.send("GET", "/hooks/functions/ping", master: true).json["url"] == "http://127.0.0.1:9/ping")
        let file = try await copy.server.request("GET", "/files/\(TestServer.applicationId)/\(app.fileName)", appId: false)
        #expect(file.text == "exported bytes")
        // Whole-class counts (kept in `_rows` on both databases) are the original's.
        for path in ["/classes/Item", "/users"] {
            let counted = try await copy.send("GET", path, master: true, query: ["count": "1", "limit": "0"])
            let original = try await app.server.send("GET", path, master: true, query: ["count": "1", "limit": "0"])
            #expect(counted.json["count"] != nil && counted.json["count"] == original.json["count"], "\(path): \(counted.text)")
        }
        // New objects get rowids past the imported ones (and new classes their own tables).
        #expect(try await copy.send("POST", "/classes/Item", json: ["title": "new"], master: true).status == 201)
        #expect(try await copy.send("POST", "/classes/Other", json: ["x": 1], master: true).status == 201)
    }

    @Test func anImportIntoPostgresIsAllOrNothing() async throws {
        let app = try await TransferCommandTests.makeApp()
        let exportPath = CommandLineTests.freshPath() + ".jsonl"
        let cut = CommandLineTests.freshPath() + ".jsonl"
        defer { unlink(exportPath); unlink(cut) }
        #expect(try Self.roost(["export"] + Self.source(app.server.server) + ["--out", exportPath]).status == 0)
        let lines = try String(contentsOfFile: exportPath, encoding: .utf8).split(separator: "\n")
        // Cut after the file's bytes, before the end record: schemas, objects, users and the file were all written.
        try (lines.dropLast().joined(separator: "\n") + "\n").write(toFile: cut, atomically: true, encoding: .utf8)

        let database = try PostgresScratchDatabase()
        defer { database.drop() }
        let partial = try Self.roost(["import", "--database-url", database.url, cut])
        #expect(partial.status == 1)
        #expect(partial.output.contains("the export was cut short"), "\(partial.output)")
        let db = try database.connect()
        #expect(try db.query("SELECT count(*) FROM _file")[0].int(0) == 0)
        #expect(try db.query("SELECT count(*) FROM _password")[0].int(0) == 0)
        // Nothing was left behind: the whole export still imports.
        let whole = try Self.roost(["import", "--database-url", database.url, exportPath])
        #expect(whole.status == 0, "\(whole.output)")
        #expect(try db.query("SELECT count(*) FROM _file")[0].int(0) == 1)
    }

    @Test func backupRefusesAPostgresDatabaseAndPointsAtPgDump() throws {
        let url = "postgres://someone:secret-password@db.example:5432/app"
        let refused = try Self.roost(["backup", "--database-url", url, "--out", CommandLineTests.freshPath()])
        #expect(refused.status == 64, "a usage error, as other invalid values: \(refused.output)")
        #expect(refused.output.contains("someone@db.example:5432/app") && refused.output.contains("pg_dump"), "\(refused.output)")
        #expect(!refused.output.contains("secret-password"))
        let fromEnvironment = try CommandLineTests.run(["backup", "--out", CommandLineTests.freshPath()], environment: ["ROOST_DATABASE_URL": url])
        #expect(fromEnvironment.status == 64 && fromEnvironment.output.contains("pg_dump"), "\(fromEnvironment.output)")
    }
}
