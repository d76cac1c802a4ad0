import Foundation
@testable import RoostServer
import Testing

/// Under a write load that never pauses, the WAL must still start over (`Checkpointer`): before,
/// a concurrent checkpoint never reached the WAL's end and the file grew by ~100 MB/s.
@Suite struct WALGrowthTests {
    @Test func theWALStaysBoundedUnderASteadyWriteLoad() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("roost-wal-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("roost.sqlite").path
        let catchUpFrames: Int64 = 256
        let storage = try Storage(path: path, walCatchUpFrames: catchUpFrames)
        try storage.write { try $0.execute("CREATE TABLE filler (id TEXT PRIMARY KEY, body TEXT) WITHOUT ROWID", cacheable: false) }

        // Random keys spread the rows over many pages: each commit appends a frame or two.
        let body = String(repeating: "x", count: 200)
        var largestWAL = 0
        let deadline = Date().addingTimeInterval(4)
        var commits = 0
        while Date() < deadline {
            try storage.write { try $0.execute("INSERT INTO filler VALUES (?, ?)", [.text(UUID().uuidString), .text(body)]) }
            commits += 1
            let attributes = try? FileManager.default.attributesOfItem(atPath: path + "-wal")
            largestWAL = max(largestWAL, attributes?[.size] as? Int ?? 0)
        }
        try storage.close()

        // Without catch-ups the WAL holds every commit's frames (measured: ~2.2 frames of 4 KB per commit);
        // with them it starts over every `catchUpFrames` frames plus what the timer lets through, which
        // under a fully parallel test run (a starved checkpointer) was measured at ~0.27 of one frame per commit.
        #expect(commits > 2_000, "too few commits (\(commits)) to say anything")
        #expect(largestWAL < commits * 4096 / 2, "WAL reached \(largestWAL) bytes after \(commits) commits")
    }
}
