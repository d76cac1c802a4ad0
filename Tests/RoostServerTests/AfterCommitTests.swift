import Foundation
import Testing
@testable import RoostServer
import RoostTestSupport

/// What a write leaves for after its commit (`after` trigger webhooks) runs once per committed write: never for
/// a write or savepoint that was undone, and not again when PostgreSQL runs a write's body a second time.
@Suite struct AfterCommitTests {
    final class Count { var value = 0 }

    @Test func anUndoneSavepointOrWriteLeavesNothingToRun() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-after-commit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let storage = try Storage(path: directory.appendingPathComponent("roost.sqlite").path)
        defer { try? storage.close() }
        try expectRunsOncePerCommit(storage)
    }

    @Test func aRetriedPostgresWriteRunsItsActionsOnce() throws {
        let scratch = try PostgresScratchDatabase()
        defer { scratch.drop() }
        let storage = try Storage(databaseURL: scratch.url, poolSize: 2)
        defer { try? storage.close() }
        try expectRunsOncePerCommit(storage)

        // A serialization failure after the action was registered: the body runs again, the action once.
        let ran = Count()
        var attempts = 0
        try storage.write { db in
            attempts += 1
            db.afterCommit { ran.value += 1 }
            if attempts == 1 { try db.execute("DO $$ BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = '40001'; END $$") }
        }
        #expect(attempts == 2)
        #expect(ran.value == 1)
    }

    private func expectRunsOncePerCommit(_ storage: Storage) throws {
        let ran = Count()
        var ranInsideWrite = -1
        struct Refused: Error {}
        try storage.write { db in
            db.afterCommit { ran.value += 1 }
            // An item whose savepoint is undone leaves nothing behind, its action included.
            _ = try? db.inSavepoint {
                db.afterCommit { ran.value += 100 }
                throw Refused()
            }
            ranInsideWrite = ran.value
        }
        #expect(ranInsideWrite == 0, "nothing runs before the commit")
        #expect(ran.value == 1)

        // A write that fails commits nothing and runs nothing.
        #expect(throws: Refused.self) {
            try storage.write { db in
                db.afterCommit { ran.value += 1_000 }
                throw Refused()
            }
        }
        #expect(ran.value == 1)
    }
}
