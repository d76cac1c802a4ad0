import Dispatch
import Glibc

/// Moves the WAL into the database file in the background, ten times a second, and keeps the WAL
/// from growing without bound.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses the threshold, so one
/// request in a thousand paid for copying pages and an fsync (a p99 spike). The writer turns it
/// off (`wal_autocheckpoint=0`) and this timer runs a PASSIVE checkpoint on its own connection,
/// which never blocks the writer or the readers.
///
/// A concurrent checkpoint never reaches the last frame while writes keep coming, and SQLite only
/// starts the WAL over once every frame is back in the database: under a steady write load the
/// WAL grew by ~100 MB/s (measured) and every commit got slower. So once the WAL passes
/// `catchUpFrames`, the writer itself finishes the checkpoint between two transactions (little is
/// left to copy by then); its next commit starts the WAL from the beginning.
final class Checkpointer: @unchecked Sendable {
    private let queue = DispatchQueue(label: "roost.checkpointer")
    private let timer: DispatchSourceTimer
    private let connection: SQLiteConnection
    /// The database file, opened again only to `fdatasync` it.
    private let databaseDescriptor: Int32
    /// 16,384 frames: 64 MB of 4 KB pages.
    static let defaultCatchUpFrames: Int64 = 16_384

    init(path: String, writer: WriteQueue, interval: DispatchTimeInterval = .milliseconds(100),
         catchUpFrames: Int64 = defaultCatchUpFrames) throws {
        connection = try SQLiteConnection(path: path, readOnly: false, pragmas: Storage.pragmas)
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + interval, repeating: interval)
        let databaseDescriptor = open(path, O_RDONLY | O_CLOEXEC)
        self.databaseDescriptor = databaseDescriptor
        var lastPass: (frames: Int64, copied: Int64)?
        timer.setEventHandler { [connection] in
            // A pass that stops short of the WAL's end (writes went on meanwhile) does not sync the
            // database file: the writer's complete checkpoint would then sync every page written
            // since. So a pass that copied anything is followed by a sync here, off the writer.
            guard let pass = Checkpointer.passiveCheckpoint(connection) else { return }
            if pass != lastPass ?? (0, 0) { _ = fdatasync(databaseDescriptor) }
            lastPass = pass
            guard pass.frames >= catchUpFrames else { return }
            // Each pass copies what came in during the previous one: a few leave the writer little to do.
            for _ in 0..<4 {
                let started = DispatchTime.now().uptimeNanoseconds
                _ = Checkpointer.passiveCheckpoint(connection)
                _ = fdatasync(databaseDescriptor)
                if DispatchTime.now().uptimeNanoseconds - started < 3_000_000 { break }
            }
            try? writer.withConnection { try $0.execute("PRAGMA wal_checkpoint(PASSIVE)", cacheable: false) }
        }
        timer.resume()
    }

    /// Runs a PASSIVE checkpoint; returns the frames in the WAL and how many of them are in the database.
    private static func passiveCheckpoint(_ connection: SQLiteConnection) -> (frames: Int64, copied: Int64)? {
        // One row: (busy, frames in the WAL, frames checkpointed).
        guard let row = try? connection.fetchRows("PRAGMA wal_checkpoint(PASSIVE)", [], cacheable: true).first,
            row.count == 3, let frames = row[1].integer, let copied = row[2].integer
        else { return nil }
        return (frames, copied)
    }

    /// Stops the timer and waits for a checkpoint in progress.
    func stop() {
        timer.cancel()
        queue.sync {}
        close(databaseDescriptor)
    }
}
