import Foundation
import Synchronization
import RoostCore
import Testing
@testable import RoostServer
import RoostTestSupport

/// The class row counts PostgreSQL keeps in `_rows` (`PostgresRowCount`), against a real cluster. `RowCountTests` runs
/// on PostgreSQL too (every way rows come and go, over HTTP); these check what is PostgreSQL's own: the migration,
/// several writers and nodes at once, and compactions racing them.
@Suite struct PostgresRowCountTests {
    /// A scratch database and a data directory for an `EmbeddedStore` on it, both gone after `body`.
    static func withScratch(_ body: (PostgresScratchDatabase, String) throws -> Void) throws {
        let scratch = try PostgresScratchDatabase()
        defer { scratch.drop() }
        let directory = NSTemporaryDirectory() + "roost-pg-rows-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try body(scratch, directory)
    }

    static func wholeCount(_ store: EmbeddedStore, _ className: String) throws -> JSON? {
        try store.find(className: className, parameters: ["count": 1, "limit": 0])["count"]
    }

    static func rowsInTable(_ db: PostgresConnection, _ table: String) throws -> Int64? {
        try db.fetchRows("SELECT COUNT(*) FROM \(table)", [], cacheable: false)[0][0].integer
    }

    /// The count is the kept one, not `COUNT(*)`: a row added to `_rows` by hand shows in it.
    @Test func aWholeClassCountReadsTheKeptRows() throws {
        try Self.withScratch { scratch, directory in
            let store = try EmbeddedStore(databaseURL: scratch.url, dataDirectory: directory)
            defer { try? store.close() }
            _ = try store.insert(className: "Item", objects: (0..<30).map { ["n": .number(Double($0))] })
            let db = try scratch.connect()
            try db.execute("INSERT INTO _rows (tableId, rows) SELECT id, 1000 FROM _schema WHERE className = 'Item'")
            #expect(try Self.wholeCount(store, "Item") == 1030)
            #expect(try store.find(className: "Item", parameters: ["count": 1, "limit": 0, "where": ["n": ["$gte": 0]]])["count"] == 30)
        }
    }

    /// A database from before migration 7: classes with objects and no `_rows`. Migrating counts each class once.
    @Test func theMigrationCountsClassesThatHaveObjects() throws {
        try Self.withScratch { scratch, directory in
            do {
                let store = try EmbeddedStore(databaseURL: scratch.url, dataDirectory: directory)
                _ = try store.insert(className: "Item", objects: (0..<50).map { ["n": .number(Double($0))] })
                _ = try store.insert(className: "Other", objects: [["n": 1]])
                try store.close()
            }
            let db = try scratch.connect()
            try db.execute("DROP TABLE _rows")
            try db.execute("DELETE FROM _roost_migrations WHERE version = 7")
            #expect(try PostgresSchema.migrate(db) == [7])
            let store = try EmbeddedStore(databaseURL: scratch.url, dataDirectory: directory)
            defer { try? store.close() }
            #expect(try Self.wholeCount(store, "Item") == 50)
            #expect(try Self.wholeCount(store, "Other") == 1)
            _ = try store.insert(className: "Item", objects: [["n": 50]])
            #expect(try Self.wholeCount(store, "Item") == 51)
        }
    }

    /// Two nodes on one database (two `roost` processes) create and delete from eight clients, past the compaction
    /// threshold many times over, while another connection compacts in a loop: the count both nodes answer at the end
    /// is what `COUNT(*)` says, and a last compaction leaves one row for the class.
    @Test func countsStayExactWithTwoNodesAndCompactionsRacingTheWrites() async throws {
        let a = try TestServer(onPostgres: true)
        let b = try TestServer(sharingDatabaseWith: a)
        let nodes = [a, b]
        _ = try await a.create("Busy", ["n": 0])
        let scratch = try #require(a.postgres)
        let url = scratch.url
        let writing = Mutex(true)
        let compacting = Task.detached {
            try await onOwnThread {
                let db = try PostgresConnection(url: url)
                var runs = 0
                while writing.withLock({ $0 }) {
                    try PostgresRowCount.compact(in: db)
                    runs += 1
                    usleep(2_000)
                }
                return runs
            }
        }
        let kept = try await withThrowingTaskGroup(of: Int.self) { group in
            for client in 0..<8 {
                group.addTask {
                    var kept = 0
                    for i in 0..<120 {
                        let node = nodes[(client + i) % 2]
                        let id = try await node.create("Busy", ["n": .number(Double(client * 1000 + i))])
                        if i % 4 == 0 {
                            let gone = try await nodes[(client + i + 1) % 2].request("DELETE", "/classes/Busy/\(id)")
                            #expect(gone.status == 200, "\(gone.text)")
                        } else {
                            kept += 1
                        }
                    }
                    return kept
                }
            }
            return try await group.reduce(1, +)
        }
        writing.withLock { $0 = false }
        #expect(try await compacting.value > 0)
        let db = try scratch.connect()
        let table = try #require(try db.fetchRows("SELECT id FROM _schema WHERE className = 'Busy'", [], cacheable: false).first?.first?.integer)
        #expect(try Self.rowsInTable(db, "c\(table)") == Int64(kept))
        for node in nodes {
            let counted = try await node.request("GET", "/classes/Busy", master: true, query: ["count": "1", "limit": "0"])
            #expect(counted.json["count"] == .number(Double(kept)), "\(counted.text)")
        }
        try PostgresRowCount.compact(in: db)
        #expect(try db.fetchRows("SELECT COUNT(*) FROM _rows WHERE tableId = ?", [.integer(table)], cacheable: false)[0][0].integer == 1)
    }

    /// A request undone by its savepoint (a grouped request, a batch item) after its insert counts nothing; the
    /// others in the transaction count.
    @Test func anInsertUndoneByItsSavepointCountsNothing() throws {
        try Self.withScratch { scratch, directory in
            let store = try EmbeddedStore(databaseURL: scratch.url, dataDirectory: directory)
            defer { try? store.close() }
            _ = try store.insert(className: "Item", objects: [["n": 0]])
            struct Undone: Error {}
            try store.storage.write { db in
                let schema = try #require(try SchemaStore.load("Item", in: db))
                func object(_ id: String) -> StoredObject {
                    StoredObject(objectId: id, createdAt: .now(), updatedAt: .now(), acl: nil, fields: ["n": 1])
                }
                #expect(throws: Undone.self) {
                    try db.inSavepoint {
                        try ObjectStore.insert(object("undone0001"), into: schema, in: db)
                        throw Undone()
                    }
                }
                try db.inSavepoint { try ObjectStore.insert(object("kept000001"), into: schema, in: db) }
            }
            #expect(try Self.wholeCount(store, "Item") == 2)
        }
    }

    /// A dropped class takes its rows with it, and a class made again under its name starts from none.
    @Test func aDroppedClassLeavesNoRows() throws {
        try Self.withScratch { scratch, directory in
            let store = try EmbeddedStore(databaseURL: scratch.url, dataDirectory: directory)
            defer { try? store.close() }
            _ = try store.insert(className: "Gone", objects: [["n": 1], ["n": 2]])
            let dropped = try store.storage.write { db in
                let schema = try #require(try SchemaStore.load("Gone", in: db))
                try SchemaStore.drop(schema, in: db)
                return schema.id
            }
            let db = try scratch.connect()
            #expect(try db.fetchRows("SELECT COUNT(*) FROM _rows WHERE tableId = ?", [.integer(dropped)], cacheable: false)[0][0].integer == 0)
            _ = try store.insert(className: "Gone", objects: [["n": 3]])
            #expect(try Self.wholeCount(store, "Gone") == 1)
        }
    }
}
