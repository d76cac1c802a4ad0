import Foundation
@testable import RoostServer
import Testing

/// The WAL's bound holds while a long read pins it, and an idle server's WAL is truncated (`Checkpointer`).
@Suite struct WALBoundTests {
    let body = String(repeating: "x", count: 200)

    func withStorage(catchUpFrames: Int64 = 256, idleDelay: DispatchTimeInterval, _ run: (Storage, String) throws -> Void) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-walbound-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("roost.sqlite").path
        let storage = try Storage(path: path, walCatchUpFrames: catchUpFrames, walIdleDelay: idleDelay)
        try storage.write { try $0.execute("CREATE TABLE filler (id TEXT PRIMARY KEY, body TEXT) WITHOUT ROWID", cacheable: false) }
        try run(storage, path)
        try storage.close()
    }

    func insert(_ storage: Storage) throws {
        try storage.write { try $0.execute("INSERT INTO filler VALUES (?, ?)", [.text(UUID().uuidString), .text(body)]) }
    }

    func walSize(_ path: String) -> Int {
        (try? FileManager.default.attributesOfItem(atPath: path + "-wal"))?[.size] as? Int ?? 0
    }

    /// A read that holds its snapshot for 2.5 s while writes go on: past 1.5 × the catch-up size the writer
    /// waits for it rather than let the WAL grow (before: every commit's ~2 frames of 4 KB stayed while it read).
    @Test func aLongReadDoesNotLetTheWALPassItsBound() throws {
        let catchUpFrames: Int64 = 1024
        try withStorage(catchUpFrames: catchUpFrames, idleDelay: .seconds(60)) { storage, path in
            for _ in 0..<50 { try insert(storage) }
            // The long read, on a thread of its own: its snapshot starts with its first statement.
            let readStarted = DispatchSemaphore(value: 0), readEnded = DispatchSemaphore(value: 0)
            Thread {
                defer { readEnded.signal() }
                guard let reader = try? SQLiteConnection(path: path, readOnly: true, pragmas: SQLiteEngine.pragmas),
                    (try? reader.execute("BEGIN")) != nil,
                    (try? reader.fetchRows("SELECT count(*) FROM filler", [], cacheable: false)) != nil
                else { readStarted.signal(); return }
                readStarted.signal()
                Thread.sleep(forTimeInterval: 2.5)
                try? reader.execute("COMMIT")
            }.start()
            readStarted.wait()
            var largestWAL = 0, commits = 0
            let deadline = Date().addingTimeInterval(5)
            while Date() < deadline {
                try insert(storage)
                commits += 1
                largestWAL = max(largestWAL, walSize(path))
            }
            readEnded.wait()
            // The bound: SQLite's own backstop at twice the catch-up size (the README's 128 MB at the default size).
            #expect(commits > 1_000, "too few commits (\(commits)) to say anything")
            #expect(largestWAL < Int(2 * catchUpFrames) * 4_120, "WAL reached \(largestWAL) bytes after \(commits) commits")
        }
    }

    /// A read connection keeps its snapshot after a read (`KeptSnapshot`); the next read after a commit sees it.
    @Test func aKeptSnapshotGivesWayToTheNextCommit() throws {
        try withStorage(idleDelay: .seconds(60)) { storage, _ in
            func count() throws -> Int64? {
                try storage.read { try $0.fetchRows("SELECT count(*) FROM filler", [], cacheable: false) }.first?.first?.integer
            }
            for expected in Int64(0)..<20 {
                #expect(try count() == expected)
                #expect(try count() == expected)  // From the kept snapshot.
                try insert(storage)
            }
            #expect(try count() == 20)
            // A read inside a read runs in the outer one's snapshot (it does not wait for itself).
            let nested = try storage.read { db in
                try insert(storage)
                return (try db.fetchRows("SELECT count(*) FROM filler", [], cacheable: false).first?.first?.integer, try count())
            }
            #expect(nested.0 == 20 && nested.1 == 20)
            #expect(try count() == 21)
        }
    }

    /// A thread that read once and then sits idle keeps a snapshot, which would hold the WAL: the writer's restart
    /// past the bound and the idle truncation end it instead of waiting for it (the restart would wait 10 s).
    @Test func anIdleThreadsKeptSnapshotHoldsNothingBack() throws {
        try withStorage(idleDelay: .milliseconds(300)) { storage, path in
            let readDone = DispatchSemaphore(value: 0), finish = DispatchSemaphore(value: 0), finished = DispatchSemaphore(value: 0)
            Thread {
                _ = try? storage.read { try $0.fetchRows("SELECT count(*) FROM filler", [], cacheable: false) }
                readDone.signal()
                finish.wait()
                finished.signal()
            }.start()
            readDone.wait()
            // Past the restart point (384 frames at this catch-up size) several times; a restart that waited for
            // the idle snapshot would take 10 s.
            let deadline = Date().addingTimeInterval(5)
            var largestWAL = 0, commits = 0
            while commits < 1_500, Date() < deadline {
                try insert(storage)
                commits += 1
                largestWAL = max(largestWAL, walSize(path))
            }
            #expect(commits == 1_500, "\(commits) of 1,500 commits in 5 s")
            #expect(largestWAL < 2 * 256 * 4_120, "WAL reached \(largestWAL) bytes")
            let idleDeadline = Date().addingTimeInterval(5)
            while walSize(path) > 0, Date() < idleDeadline { Thread.sleep(forTimeInterval: 0.05) }
            #expect(walSize(path) == 0, "the WAL still holds \(walSize(path)) bytes after 5 s without writes")
            finish.signal()
            finished.wait()
        }
    }

    @Test func anIdleWALIsTruncated() throws {
        try withStorage(idleDelay: .milliseconds(300)) { storage, path in
            for _ in 0..<300 { try insert(storage) }
            #expect(walSize(path) > 0)
            let deadline = Date().addingTimeInterval(5)
            while walSize(path) > 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            #expect(walSize(path) == 0, "the WAL still holds \(walSize(path)) bytes after 5 s without writes")
            // The data is all in the database file, and writes go on as before.
            try insert(storage)
            let rows = try storage.read { try $0.fetchRows("SELECT count(*) FROM filler", [], cacheable: false) }
            #expect(rows.first?.first?.integer == 301)
        }
    }
}
