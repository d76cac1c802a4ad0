import Foundation
import RoostCore
@testable import RoostServer
import RoostTestSupport
import Testing

/// `PostgresConnection` as the stores use a database (`SQLQuerying`, `execute`, `changes`), against the real cluster.
@Suite struct PostgresSQLQueryingTests {
    let url: String
    let table = "q_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")

    init() throws { url = try PostgresTestCluster.url() }

    private func withTable<T>(_ body: (PostgresConnection) throws -> T) throws -> T {
        let db = try PostgresConnection(url: url)
        try db.execute("CREATE TABLE \(table) (objectId text PRIMARY KEY, n bigint, d float8, acl text, data jsonb)")
        defer { _ = try? db.execute("DROP TABLE IF EXISTS \(table)") }
        return try body(db)
    }

    @Test func valuesReadBackAsSQLiteAnswersThem() throws {
        let db = try PostgresConnection(url: url)
        let row = try #require(try db.fetchRows("""
            SELECT 1::int2, 2::int4, 3::int8, 1.5::float4, 2.5::float8, 3.25::numeric, true, false,
                '{"b": 1, "a": [true, null]}'::jsonb, 'x'::text, NULL, ?, ?, ?, ?
            """, [.integer(-7), .real(0.1), .text("é ✓"), .null], cacheable: true).first)
        #expect(row == [.integer(1), .integer(2), .integer(3), .real(1.5), .real(2.5), .real(3.25), .integer(1), .integer(0),
                        .text(#"{"a": [true, null], "b": 1}"#), .text("x"), .null, .integer(-7), .real(0.1), .text("é ✓"), .null])
    }

    /// The stores' statements as they are written for SQLite: `?` marks, JSON text into a jsonb column.
    @Test func storeStatementsRunWithTheirMarks() throws {
        try withTable { db in
            try db.execute("INSERT INTO \(table) (objectId, n, d, acl, data) VALUES (?, ?, ?, ?, ?)",
                           [.text("a"), .integer(Int64.max), .real(-1.5e-300), .null, .text(#"{"score": 1337, "name": "Sean"}"#)])
            try db.execute("INSERT INTO \(table) (objectId, n, data) VALUES (?1, ?2, ?3) ON CONFLICT (objectId) DO UPDATE SET n = ?2 + 1",
                           [.text("a"), .integer(5), .text("{}")], cacheable: false)
            let rows = try db.fetchRows("SELECT n, d, acl, data ->> 'name', data -> 'score' FROM \(table) WHERE objectId = ?",
                                        [.text("a")], cacheable: true)
            #expect(rows == [[.integer(6), .real(-1.5e-300), .null, .text("Sean"), .text("1337")]])
            // A statement error is the server's, with its SQLSTATE; the connection stays usable.
            let error = try #require(throws: PostgresError.self) {
                try db.execute("INSERT INTO \(table) (objectId, data) VALUES (?, ?)", [.text("b"), .text("not json")])
            }
            #expect(error.sqlState == .invalidTextRepresentation)
            #expect(try db.fetchRows("SELECT count(*) FROM \(table)", [], cacheable: true) == [[.integer(1)]])
        }
    }

    @Test func changesCountsTheLastWriteOnly() throws {
        try withTable { db in
            for id in ["a", "b", "c"] { try db.execute("INSERT INTO \(table) (objectId, n) VALUES (?, 0)", [.text(id)]) }
            #expect(db.changes == 1)
            try db.execute("UPDATE \(table) SET n = n + 1", [])
            #expect(db.changes == 3)
            // Reads, DDL and transaction control leave it alone, as sqlite3_changes does.
            _ = try db.fetchRows("SELECT * FROM \(table)", [], cacheable: true)
            try db.execute("BEGIN", [])
            try db.execute("COMMIT", [])
            #expect(db.changes == 3)
            try db.execute("DELETE FROM \(table) WHERE objectId = ?", [.text("zz")])
            #expect(db.changes == 0)
            try db.execute("INSERT INTO \(table) (objectId) VALUES (?) ON CONFLICT DO NOTHING", [.text("a")])
            #expect(db.changes == 0)
            try db.execute("DELETE FROM \(table) WHERE n = ?", [.integer(1)], cacheable: false)
            #expect(db.changes == 3)
            // Rows counted in single-row mode too.
            try db.forEachRow("INSERT INTO \(table) (objectId) VALUES ('x'), ('y') RETURNING objectId", [], cacheable: false) { _ in }
            #expect(db.changes == 2)
        }
    }

    /// Client-shaped SQL (`cacheable: false`) runs unnamed: the connection's prepared statements do not grow with it.
    @Test func uncacheableSQLIsNeverPrepared() throws {
        let db = try PostgresConnection(url: url)
        func prepared() throws -> Int64 {
            try db.fetchRows("SELECT count(*) FROM pg_prepared_statements", [], cacheable: false)[0][0].integer ?? -1
        }
        let before = try prepared()
        for number in 0..<50 {
            _ = try db.fetchRows("SELECT ? + \(number)", [.integer(1)], cacheable: false)
            try db.forEachRow("SELECT ? * \(number)", [.integer(2)], cacheable: false) { _ in }
            try db.execute("SELECT ? - \(number)", [.integer(3)], cacheable: false)
        }
        #expect(try prepared() == before)
        _ = try db.fetchRows("SELECT ? + 1000", [.integer(1)], cacheable: true)
        try db.forEachRow("SELECT ? + 1001", [.integer(1)], cacheable: true) { _ in }
        _ = try db.fetchRows("SELECT ? + 1000", [.integer(1)], cacheable: true)
        #expect(try prepared() == before + 2)
    }

    @Test func forEachRowHandsOverEveryRowInOrder() throws {
        let db = try PostgresConnection(url: url)
        for cacheable in [true, false] {
            var seen: [Int64] = []
            try db.forEachRow("SELECT g, g * 0.5, 'r' || g FROM generate_series(1, ?) AS g ORDER BY g", [.integer(2500)],
                              cacheable: cacheable) { row in
                #expect(row[1] == .real(Double(row[0].integer ?? 0) * 0.5) && row[2].text == "r\(row[0].integer ?? 0)")
                seen.append(row[0].integer ?? 0)
            }
            #expect(seen == Array(1...2500))
            var none = 0
            try db.forEachRow("SELECT 1 WHERE false", [], cacheable: cacheable) { _ in none += 1 }
            #expect(none == 0)
        }
    }

    /// A server error after some rows: those rows were handed over, the error is thrown, the connection goes on.
    @Test func forEachRowStopsAtAServerError() throws {
        let db = try PostgresConnection(url: url)
        var seen: [Int64] = []
        let error = try #require(throws: PostgresError.self) {
            try db.forEachRow("SELECT 10 / (5 - g) FROM generate_series(1, 10) AS g", [], cacheable: true) { seen.append($0[0].integer ?? 0) }
        }
        #expect(error.sqlState == SQLState(rawValue: "22012"))  // division_by_zero
        #expect(seen == [2, 3, 5, 10])
        #expect(try db.fetchRows("SELECT 1", [], cacheable: true) == [[.integer(1)]])
    }

    struct Stop: Error {}

    /// A body that throws ends the read: outside a transaction the statement is cancelled (a stream of 50 million
    /// rows stops at once); inside one the rest is read and dropped, and the transaction goes on unharmed.
    @Test func aThrowingBodyLeavesTheConnectionReady() throws {
        let db = try PostgresConnection(url: url)
        let started = Date()
        #expect(throws: Stop.self) {
            // A recursive CTE streams its rows (generate_series in FROM would build all 50 million first).
            let stream = "WITH RECURSIVE s (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 50000000) SELECT n FROM s"
            try db.forEachRow(stream, [], cacheable: false) { row in
                if row[0].integer == 10 { throw Stop() }
            }
        }
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(db.isIdle)
        #expect(try db.fetchRows("SELECT 2", [], cacheable: true) == [[.integer(2)]])

        try db.transaction { db in
            try db.execute("CREATE TEMPORARY TABLE kept (n bigint)", [], cacheable: false)
            #expect(throws: Stop.self) {
                try db.forEachRow("SELECT g FROM generate_series(1, 20000) AS g", [], cacheable: true) { _ in throw Stop() }
            }
            try db.execute("INSERT INTO kept VALUES (?)", [.integer(7)], cacheable: false)
        }
        #expect(try db.fetchRows("SELECT n FROM kept", [], cacheable: false) == [[.integer(7)]])
    }

    /// Prepared statements the session lost (DEALLOCATE ALL, as a pooler's DISCARD ALL) or that a table's new shape
    /// made stale are prepared again, for streamed reads as for collected ones.
    @Test func stalePreparedStatementsArePreparedAgain() throws {
        try withTable { db in
            try db.execute("INSERT INTO \(table) (objectId, n) VALUES ('a', 1)", [])
            let select = "SELECT * FROM \(table) WHERE objectId = ?"
            func streamed() throws -> [[SQLValue]] {
                var rows: [[SQLValue]] = []
                try db.forEachRow(select, [.text("a")], cacheable: true) { rows.append($0) }
                return rows
            }
            #expect(try streamed().first?.count == 5)
            try db.execute("DEALLOCATE ALL")
            #expect(try streamed().first?.count == 5)
            try db.execute("ALTER TABLE \(table) ADD COLUMN extra text DEFAULT 'e'")
            #expect(try streamed().first?.last == .text("e"))
            try db.execute("ALTER TABLE \(table) DROP COLUMN extra")
            #expect(try db.fetchRows(select, [.text("a")], cacheable: true).first?.count == 5)
        }
    }

    /// A statement stopped by its time limit is `isInterrupted` (SQLite's SQLITE_INTERRUPT, answered as 124); a lock
    /// not granted within lock_timeout is `isBusy` (SQLITE_BUSY).
    @Test func timeLimitsClassifyAsSQLite() throws {
        try withTable { db in
            try db.execute("INSERT INTO \(table) (objectId, n) VALUES ('a', 1)", [])
            try db.execute("SET statement_timeout = 50", [])
            let stopped = try #require(throws: PostgresError.self) { _ = try db.fetchRows("SELECT pg_sleep(2)", [], cacheable: true) }
            #expect(stopped.isInterrupted && !stopped.isBusy && !stopped.isUniqueViolation)
            try db.execute("RESET statement_timeout", [])

            let other = try PostgresConnection(url: url)
            try other.transaction { other in
                try other.execute("UPDATE \(table) SET n = 2 WHERE objectId = 'a'", [])
                try db.execute("SET lock_timeout = 50", [])
                let busy = try #require(throws: PostgresError.self) {
                    try db.execute("UPDATE \(table) SET n = 3 WHERE objectId = 'a'", [])
                }
                #expect(busy.isBusy && !busy.isInterrupted && !busy.isRetryable)
            }
            #expect(try db.fetchRows("SELECT n FROM \(table)", [], cacheable: true) == [[.integer(2)]])
        }
    }

    /// PostgreSQL's text cannot hold NUL, and a parameter is a C string: refused before it is cut short, with the
    /// client's error (107), as is `\u0000` in JSON text cast to jsonb.
    @Test func textWithANulIsRefused() throws {
        let db = try PostgresConnection(url: url)
        for (sql, value) in [("SELECT ?", "a\u{0}b"), ("SELECT CAST(? AS jsonb)", #"{"a":"\u0000"}"#)] {
            let error = try #require(throws: ParseError.self) { _ = try db.fetchRows(sql, [.text(value)], cacheable: true) }
            #expect(error.code == .invalidJSON)
        }
        #expect(try db.fetchRows("SELECT ?", [.text("")], cacheable: true) == [[.text("")]])
    }
}
