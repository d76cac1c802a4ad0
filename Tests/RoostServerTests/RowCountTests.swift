import Foundation
import RoostCore
@testable import RoostServer
import Testing

/// A whole-class `count` reads the row count the class table's triggers keep (`RowCount`; on PostgreSQL the rows
/// the writes add, `PostgresRowCount`): it must follow every way rows come and go, stay put when a transaction is
/// undone, and start right on an older data dir.
@Suite struct RowCountTests {
    /// The class's count as the master key, an anonymous caller and a condition every object matches
    /// (which SQLite counts itself) answer it: all three from the same rows.
    func expectCount(_ server: TestServer, _ className: String, all: Int, hidden: Int,
                     sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let master = try await server.request("GET", "/classes/\(className)", master: true, query: ["count": "1", "limit": "0"])
        #expect(master.json["count"] == .number(Double(all)), "\(master.text)", sourceLocation: sourceLocation)
        let anonymous = try await server.request("GET", "/classes/\(className)", query: ["count": "1", "limit": "0"])
        #expect(anonymous.json["count"] == .number(Double(all - hidden)), "\(anonymous.text)", sourceLocation: sourceLocation)
        let scanned = try await server.request("GET", "/classes/\(className)", master: true,
                                               query: ["count": "1", "limit": "0", "where": #"{"n":{"$exists":true}}"#])
        #expect(scanned.json["count"] == .number(Double(all)), "\(scanned.text)", sourceLocation: sourceLocation)
    }

    @Test func countsFollowEveryWayRowsComeAndGo() async throws {
        let server = try TestServer()
        // 20 objects, every fourth readable by the master key alone.
        let objects: [JSON] = (0..<20).map { i in i % 4 == 0 ? ["n": .number(Double(i)), "ACL": [:]] : ["n": .number(Double(i))] }
        let ids = try await server.createAll("Tally", objects)
        try await expectCount(server, "Tally", all: 20, hidden: 5)

        // A batch undone as a whole counts nothing; one that commits counts its creates.
        let undone = try await server.request("POST", "/batch", json: [
            "transaction": true,
            "requests": [
                ["method": "POST", "path": "/parse/classes/Tally", "body": ["n": 100]],
                ["method": "POST", "path": "/parse/classes/Tally", "body": ["n": "not a number"]],
            ],
        ])
        #expect(undone.status >= 400, "\(undone.text)")
        try await expectCount(server, "Tally", all: 20, hidden: 5)
        let committed = try await server.request("POST", "/batch", json: [
            "requests": .array((0..<3).map { i in ["method": "POST", "path": "/parse/classes/Tally", "body": ["n": .number(Double(200 + i))]] }),
        ])
        #expect(committed.status == 200, "\(committed.text)")
        try await expectCount(server, "Tally", all: 23, hidden: 5)

        // Deletes (a hidden object among them) and updates, which change no count.
        for id in ids.prefix(3) {
            #expect(try await server.request("DELETE", "/classes/Tally/\(id)", master: true).status == 200)
        }
        _ = try await server.request("PUT", "/classes/Tally/\(ids[5])", json: ["n": 55])
        try await expectCount(server, "Tally", all: 20, hidden: 4)

        // Purged, then filled again; dropped, then made again under the same name.
        #expect(try await server.request("DELETE", "/purge/Tally", master: true).status == 200)
        try await expectCount(server, "Tally", all: 0, hidden: 0)
        _ = try await server.createAll("Tally", [["n": 1], ["n": 2]])
        try await expectCount(server, "Tally", all: 2, hidden: 0)
        #expect(try await server.request("DELETE", "/purge/Tally", master: true).status == 200)
        #expect(try await server.request("DELETE", "/schemas/Tally", master: true).status == 200)
        _ = try await server.createAll("Tally", [["n": 1], ["n": 2], ["n": 3, "ACL": [:]]])
        try await expectCount(server, "Tally", all: 3, hidden: 1)
    }

    /// Creates and deletes from many clients at once, grouped into shared transactions by the writer: the kept count
    /// is what SQLite counts.
    @Test func concurrentCreatesAndDeletesCountExactly() async throws {
        let server = try TestServer()
        let kept = try await withThrowingTaskGroup(of: Int.self) { group in
            for client in 0..<8 {
                group.addTask {
                    var kept = 0
                    for i in 0..<20 {
                        let id = try await server.create("Busy", ["n": .number(Double(client * 100 + i))])
                        if i % 3 == 0 {
                            #expect(try await server.request("DELETE", "/classes/Busy/\(id)").status == 200)
                        } else {
                            kept += 1
                        }
                    }
                    return kept
                }
            }
            return try await group.reduce(0, +)
        }
        try await expectCount(server, "Busy", all: kept, hidden: 0)
    }

    /// A data dir from before `v15`: no `_rows`, no triggers. Opening it counts each class once. (PostgreSQL's
    /// migration: `PostgresRowCountTests`.)
    @Test(.enabled(if: !TestServer.onPostgres, "SQLite's migration")) func theMigrationCountsOldTables() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-rows-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try EmbeddedStore(dataDirectory: directory)
        _ = try store.insert(className: "Item", objects: (0..<50).map { ["n": .number(Double($0))] })
        try store.close()
        let old = try SQLiteConnection(path: directory + "/roost.sqlite", readOnly: false, pragmas: SQLiteEngine.pragmas)
        for sql in ["DROP TRIGGER c1_rows_insert", "DROP TRIGGER c1_rows_delete", "DROP TABLE _rows",
                    "DELETE FROM grdb_migrations WHERE identifier = 'v15: counted class tables'", "PRAGMA wal_checkpoint(TRUNCATE)"] {
            try old.execute(sql, cacheable: false)
        }
        let reopened = try EmbeddedStore(dataDirectory: directory)
        defer { try? reopened.close() }
        let counted = try reopened.find(className: "Item", parameters: ["count": 1, "limit": 0])
        #expect(counted["count"] == 50)
        _ = try reopened.insert(className: "Item", objects: [["n": 50]])
        #expect(try reopened.find(className: "Item", parameters: ["count": 1, "limit": 0])["count"] == 51)
        let triggers = try old.fetchRows("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name", [], cacheable: false)
        #expect(triggers.map { $0.first?.text } == ["c1_rows_delete", "c1_rows_insert"])
    }
}
