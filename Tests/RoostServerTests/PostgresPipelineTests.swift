import Foundation
@testable import RoostServer
import RoostTestSupport
import Testing

/// Statements sent ahead of the next one in libpq's pipeline mode (`PostgresConnection+Pipeline`): what a refusal, a
/// failed run, an unread COMMIT and an unsent SAVEPOINT leave behind, against a real cluster.
@Suite struct PostgresPipelineTests {
    let url: String

    init() throws { url = try PostgresTestCluster.url() }

    /// libpq refuses a statement with more parameters than the protocol carries (65,535) after the BEGIN ahead of it
    /// was queued: the pipeline still ends, the error comes back, and the connection is ready for the next transaction.
    @Test func aRefusedStatementFailsWithoutHangingTheConnection() throws {
        let db = try PostgresConnection(url: url)
        let started = Date()
        #expect(throws: PostgresError.self) {
            try db.transaction { db in try db.query("SELECT 1", Array(repeating: PostgresValue.int(1), count: 70_000)) }
        }
        #expect(Date().timeIntervalSince(started) < 5)
        #expect(db.isConnected && db.isIdle)
        #expect(try db.transaction { db in try db.query("SELECT 2 AS n").rows[0].int("n") } == 2)
    }

    /// A statement whose PREPARE took but whose run failed (here: division by zero, in the BEGIN's pipeline) is kept:
    /// running it again reuses it instead of preparing another copy on the server each time.
    @Test func aStatementPreparedButFailingIsPreparedOnce() throws {
        let db = try PostgresConnection(url: url)
        let sql = "SELECT 1 / $1::int8 AS n"
        for _ in 0..<3 {
            #expect(throws: PostgresError.self) { try db.transaction { db in try db.query(sql, [.int(0)]) } }
        }
        let copies = try db.query("SELECT count(*) AS n FROM pg_prepared_statements WHERE statement = $1", [.text(sql)]).rows[0].int("n")
        #expect(copies == 1)
        #expect(try db.transaction { db in try db.query(sql, [.int(1)]).rows[0].int("n") } == 1)
    }

    /// A pooled read's COMMIT goes out without waiting for its answer: the server ends the transaction at once (no
    /// snapshot held while the connection sits in the pool), and the next use reads the answer first.
    @Test func anUnreadCommitEndsTheTransactionAndIsReadAtTheNextUse() throws {
        let reader = try PostgresConnection(url: url), watcher = try PostgresConnection(url: url)
        let value = try reader.transaction(.repeatableReadOnly, awaitingCommit: false) { db in
            try db.query("SELECT 7 AS n").rows[0].int("n")
        }
        #expect(value == 7 && reader.commitUnread)
        let deadline = Date().addingTimeInterval(5)
        var state = ""
        while Date() < deadline {
            state = try watcher.query("SELECT state FROM pg_stat_activity WHERE pid = $1", [.int(Int64(reader.backendPID))]).rows.first?
                .string("state") ?? "gone"
            if state == "idle" { break }
            usleep(10_000)
        }
        #expect(state == "idle", "the reader's backend is \(state)")
        #expect(try reader.query("SELECT 8 AS n").rows[0].int("n") == 8)
        #expect(!reader.commitUnread && reader.isIdle)
    }

    /// A savepoint whose body runs no statement sends none (withdrawn unsent), and one whose body throws before any
    /// statement leaves the transaction usable; a savepoint undone after its statement ran rolls only itself back.
    @Test func savepointsThatRanNothingCostNothingAndUndoOnlyThemselves() throws {
        let db = try PostgresConnection(url: url)
        let table = "p_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        try db.execute("CREATE TABLE \(table) (n int8)")
        defer { _ = try? db.execute("DROP TABLE IF EXISTS \(table)") }
        var queuedAfterEmpty = -1, refusals = 0
        try db.transaction { db in
            try db.execute("INSERT INTO \(table) VALUES (?)", [.integer(1)])
            try db.inSavepoint {}
            queuedAfterEmpty = db.statementsToSend.count  // The empty savepoint was taken back.
            do { try db.inSavepoint { throw Refused() } } catch is Refused { refusals += 1 }
            do {
                try db.inSavepoint {
                    try db.execute("INSERT INTO \(table) VALUES (?)", [.integer(2)])
                    throw Refused()
                }
            } catch is Refused { refusals += 1 }
            try db.inSavepoint { try db.execute("INSERT INTO \(table) VALUES (?)", [.integer(3)]) }
        }
        #expect(queuedAfterEmpty == 0 && refusals == 2)
        #expect(try db.fetchRows("SELECT n FROM \(table) ORDER BY n", [], cacheable: false) == [[.integer(1)], [.integer(3)]])
    }

    /// Statements answered later (`answeringLater`, a grouped write's first run) go out together at its end. When the
    /// body throws, those still unsent are taken back with its savepoint, a nested savepoint's too, so nothing of the
    /// undone run goes out with a later statement; when one fails at the end (a duplicate key), its savepoint undoes
    /// those sent with it, though a savepoint inside it was left open (its RELEASE skipped), as when an item after
    /// the failing one swallowed the error; the transaction goes on.
    @Test func statementsAnsweredLaterAreTakenBackOrUndoneWithTheirSavepoint() throws {
        let db = try PostgresConnection(url: url)
        let table = "later_\(UInt32.random(in: 0...UInt32.max))"
        try db.execute("CREATE TABLE \(table) (n int8 PRIMARY KEY)")
        defer { _ = try? db.execute("DROP TABLE \(table)") }
        let insert = "INSERT INTO \(table) (n) VALUES (?)"
        func group(_ numbers: [Int64], thenThrow: Bool = false) throws {
            try db.inSavepointToRunAgain {
                try db.answeringLater {
                    try db.runAnsweredLater(insert, [.integer(numbers[0])])
                    try db.inSavepoint { for n in numbers.dropFirst() { try db.runAnsweredLater(insert, [.integer(n)]) } }
                    if thenThrow { throw Refused() }
                }
            }
        }
        var unsentAfterThrow = -1
        try db.transaction { db in
            try group([1, 2])  // Prepares the INSERT (a round trip of its own): from here on, nothing waits.
            #expect(throws: Refused.self) { try group([10, 11, 12], thenThrow: true) }
            unsentAfterThrow = db.statementsToSend.count
            #expect(throws: PostgresError.self) { try group([20, 21, 20]) }
            // A request in savepoints of its own (batch items) whose first item's INSERT fails in the round trip of
            // the second's read, whose error the second swallows: the group still fails (the transaction is left
            // aborted, and its RELEASE refused), and is undone.
            #expect(throws: (any Error).self) {
                try db.inSavepointToRunAgain {
                    try db.answeringLater {
                        try db.inSavepoint { try db.runAnsweredLater(insert, [.integer(1)]) }
                        _ = try? db.inSavepoint { try db.fetchRows("SELECT 1", [], cacheable: false) }
                        try db.inSavepoint { try db.runAnsweredLater(insert, [.integer(25)]) }
                    }
                }
            }
            try group([30])
            #expect(!db.writeState.answersLater)
        }
        #expect(unsentAfterThrow == 1, "the RELEASE of the group before, alone")
        let rows = try db.fetchRows("SELECT n FROM \(table) ORDER BY n", [], cacheable: false)
        #expect(rows == [[.integer(1)], [.integer(2)], [.integer(30)]], "\(rows)")
    }

    /// A new statement in an aborted transaction, with the statement cache full: it fails, and the statement it would
    /// have evicted stays counted, as the session still holds it (its DEALLOCATE failed too). The session then never
    /// holds more than `preparedLimit` (before, one more for good per such failure).
    @Test func aFullStatementCacheInAFailedTransactionLeaksNoStatement() throws {
        let db = try PostgresConnection(url: url)
        for n in 0..<PostgresConnection.preparedLimit { _ = try db.query("SELECT \(n) AS n") }
        var divisionFailed = false
        #expect(throws: PostgresError.self) {
            try db.transaction { db in
                do { _ = try db.query("SELECT 1 / 0 AS n") } catch is PostgresError { divisionFailed = true }  // Now aborted.
                _ = try db.query("SELECT 'needs room' AS n")
            }
        }
        #expect(divisionFailed)
        for n in 0..<10 { _ = try db.query("SELECT \(n) + 1000 AS n") }
        let held = try db.query("SELECT count(*) AS n FROM pg_prepared_statements").rows[0].int("n")
        #expect(held == PostgresConnection.preparedLimit)
    }

    /// A statement sent ahead by name (`sendPreparedWithNext`, the LiveQuery log's) is prepared once, takes a NULL
    /// and a number alike, and is committed even when nothing else in its transaction went out before the COMMIT.
    @Test func aStatementSentAheadByNameIsPreparedOnceAndCommitted() throws {
        let db = try PostgresConnection(url: url)
        let table = "ahead_\(UInt32.random(in: 0...UInt32.max))"
        try db.execute("CREATE TABLE \(table) (n bigint)")
        defer { _ = try? db.execute("DROP TABLE \(table)") }
        let sql = "INSERT INTO \(table) (n) VALUES ($1)"
        try db.transaction { db in
            try db.sendPreparedWithNext(sql, [.int(1)])  // Prepared here, in a round trip of its own.
            try db.sendPreparedWithNext(sql, [.null])
        }
        try db.transaction { db in try db.sendPreparedWithNext(sql, [.int(3)]) }  // Only queued: the COMMIT carries it.
        #expect(db.isIdle)
        let rows = try db.query("SELECT count(*) AS rows, count(n) AS numbers, sum(n) AS total FROM \(table)").rows[0]
        #expect(try rows.int("rows") == 3 && rows.int("numbers") == 2 && rows.int("total") == 4)
        let copies = try db.query("SELECT count(*) AS n FROM pg_prepared_statements WHERE statement = $1", [.text(sql)]).rows[0].int("n")
        #expect(copies == 1)
    }
}

private struct Refused: Error {}
