import Foundation
@testable import RoostServer
import Testing

/// `inSavepoint` and `inSavepointToRunAgain` (the latter `WriteBatcher`'s group savepoint): both undo what their
/// body wrote when it throws; only the first makes its `survivingRollback` writes once more (its body does not run
/// again), where the second drops them (its caller runs the body again, which writes them again).
@Suite struct SavepointTests {
    private struct Refused: Error {}

    private static func count(_ db: SQLiteConnection, _ table: String) throws -> Int64? {
        try db.fetchRows("SELECT count(*) FROM \(table)", [], cacheable: false).first?.first?.integer
    }

    @Test func aSavepointToRunAgainDropsWhatSurvivesRollbacks() throws {
        try SQLiteScratch.with { db in
            try db.execute("CREATE TABLE counted (n INTEGER)", [], cacheable: false)
            try db.execute("CREATE TABLE surviving (n INTEGER)", [], cacheable: false)
            for rerun in [false, true] {
                try db.execute("DELETE FROM counted", [], cacheable: false)
                try db.execute("DELETE FROM surviving", [], cacheable: false)
                try db.inTransaction {
                    let body = {
                        try db.execute("INSERT INTO counted VALUES (1)", [], cacheable: false)
                        try db.survivingRollback { try $0.execute("INSERT INTO surviving VALUES (1)", [], cacheable: false) }
                        throw Refused()
                    }
                    #expect(throws: Refused.self) { rerun ? try db.inSavepointToRunAgain(body) : try db.inSavepoint(body) }
                    #expect(db.writeState.rollbackProofWrites.count == (rerun ? 0 : 1))
                }
                #expect(try Self.count(db, "counted") == 0)
                #expect(try Self.count(db, "surviving") == (rerun ? 0 : 1), "rerun: \(rerun)")
            }
        }
    }
}
