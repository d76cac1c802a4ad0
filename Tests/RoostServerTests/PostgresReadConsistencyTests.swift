import Foundation
import RoostCore
import Testing
@testable import RoostServer
import RoostTestSupport

/// Reads on PostgreSQL, against a real cluster: a snapshot read is one transaction; a read of each statement runs
/// none (`ReadConsistency.eachStatement`, what gets and finds use). Both keep `--query-timeout`; writes on the same
/// connections keep the server's default (none), whatever the reads set on the session.
@Suite struct PostgresReadConsistencyTests {
    /// `now()` is the time the transaction began: the same for two statements of one snapshot, not of two statements
    /// that each run alone.
    @Test func aReadOfEachStatementRunsItsStatementsOutsideATransaction() throws {
        let scratch = try PostgresScratchDatabase()
        defer { scratch.drop() }
        let storage = try Storage(databaseURL: scratch.url, poolSize: 1)
        defer { try? storage.close() }
        func twoClocks(_ consistency: ReadConsistency) throws -> (String?, String?) {
            try storage.read(consistency) { db in
                let first = try db.fetchRows("SELECT now()::text", [], cacheable: true)[0][0].text
                usleep(20_000)
                return (first, try db.fetchRows("SELECT now()::text", [], cacheable: true)[0][0].text)
            }
        }
        let snapshot = try twoClocks(.snapshot)
        #expect(snapshot.0 != nil && snapshot.0 == snapshot.1)
        let each = try twoClocks(.eachStatement)
        #expect(each.0 != nil && each.1 != nil && each.0 != each.1)
    }

    /// One pooled connection serves every read and write here, so each sees what the one before left on the session.
    @Test func readsStopAtTheTimeLimitAndWritesAreNotLimitedByIt() throws {
        let scratch = try PostgresScratchDatabase()
        defer { scratch.drop() }
        let storage = try Storage(databaseURL: scratch.url, poolSize: 1, queryTimeout: 0.2)
        defer { try? storage.close() }
        func expectTimeLimit(_ consistency: ReadConsistency) {
            let started = Date()
            do {
                _ = try storage.read(consistency) { db in try db.fetchRows("SELECT pg_sleep(2)", [], cacheable: true) }
                Issue.record("a \(consistency) read ran past its time limit")
            } catch let error as ParseError {
                #expect(error.code == .timeout)
            } catch {
                Issue.record("\(error)")
            }
            #expect(Date().timeIntervalSince(started) < 1.5)
        }
        func limitInsideWrite() throws -> String? {
            try storage.write { db in try db.fetchRows("SHOW statement_timeout", [], cacheable: false)[0][0].text }
        }
        #expect(try limitInsideWrite() == "0")
        expectTimeLimit(.eachStatement)
        // The session now limits statements outside transactions; a write still runs under the server's default.
        #expect(try limitInsideWrite() == "0")
        try storage.write { db in _ = try db.fetchRows("SELECT pg_sleep(0.4)", [], cacheable: false) }
        expectTimeLimit(.snapshot)
        expectTimeLimit(.eachStatement)
        #expect(try storage.read(.eachStatement) { db in try db.fetchRows("SELECT 3", [], cacheable: true)[0][0].integer } == 3)
    }

    /// `--query-timeout 0` is no limit for reads, even where the database sets one of its own; writes keep the database's.
    @Test func noTimeLimitOverridesTheDatabasesOwnForReadsOnly() throws {
        let scratch = try PostgresScratchDatabase()
        defer { scratch.drop() }
        try scratch.connect().execute("ALTER DATABASE \(scratch.name) SET statement_timeout = 12345")
        let storage = try Storage(databaseURL: scratch.url, poolSize: 1, queryTimeout: 0)
        defer { try? storage.close() }
        func limit(_ consistency: ReadConsistency) throws -> String? {
            try storage.read(consistency) { db in try db.fetchRows("SHOW statement_timeout", [], cacheable: false)[0][0].text }
        }
        for _ in 0..<2 {  // Before and after the session's limit is set.
            #expect(try limit(.snapshot) == "0")
            #expect(try limit(.eachStatement) == "0")
            #expect(try storage.write { db in try db.fetchRows("SHOW statement_timeout", [], cacheable: false)[0][0].text } == "12345ms")
        }
    }
}
