import CSQLite
import Dispatch
import Foundation
import Glibc

/// Moves the WAL into the database file in the background, forty times a second while writes come and ten
/// times once they stop, on its own low-priority thread, and keeps the WAL from growing without bound.
///
/// SQLite's automatic checkpoint runs inside the commit that crosses the threshold, so one
/// request in a thousand paid for copying pages and an fsync (a p99 spike). The writer moves it
/// to twice `catchUpFrames` (a backstop, for when this low-priority thread gets no CPU) and this
/// thread runs a PASSIVE checkpoint on its own connection, which never blocks the writer or
/// the readers.
///
/// A concurrent checkpoint never reaches the last frame while writes keep coming, and SQLite only
/// starts the WAL over once every frame is back in the database: under a steady write load the
/// WAL grew by ~100 MB/s (measured) and every commit got slower. So once the WAL passes
/// `catchUpFrames`, the writer itself finishes the checkpoint between two transactions (little is
/// left to copy by then); its next commit starts the WAL from the beginning.
///
/// A read in progress holds its snapshot's frames: the checkpoint cannot copy past them and the WAL
/// cannot start over, so under mixed load (queries scanning a large class while writes go on) it
/// grew past its bound (177 and 246 MB measured). The writer's checkpoint is therefore a RESTART, which
/// also waits for the reads that began before it: 20 ms here at the catch-up size, and past `restartFrames`
/// (96 MB) the commit itself restarts the WAL, waiting as long as a read may last (the query time limit)
/// and holding the writes back (`SQLiteConnection.restartWAL`, which needs no CPU from this thread).
///
/// Once no write has come for `idleDelay`, the WAL is truncated to nothing, so an idle server's
/// disk footprint is its data.
///
/// Each pass's checkpoint first syncs the WAL (SQLite's order: the database file must never hold a page whose
/// frame could be lost), and that sync is the disk's work for every byte written since the last pass: 9 KB per
/// small create, ~230 MB/s under `wrk`. Passes ten times a second made bursts that slowed the requests around
/// them: create p99 3.0-3.5 ms, 1.7-2.3 ms with the syncs stubbed out. So while writes come, a pass runs every
/// 25 ms and, every `writebackInterval` (5 ms) between them, the WAL's new pages are handed to the
/// disk without waiting (`roost_start_writeback`): the sync finds little left. Measured (wrk, 16 connections,
/// creates, 6 s rounds, alternating): p99 3.2 → 2.2 ms with 25 ms passes, p98 1.7 → 1.4 ms with the writeback
/// steps too, create rate unchanged or up 2-3 %.
final class Checkpointer: @unchecked Sendable {
    private let connection: SQLiteConnection
    private let writer: WriteQueue
    /// Between passes while the server is idle; while writes come, `writebackSteps` × `writebackInterval` (25 ms).
    private let interval: DispatchTimeInterval
    /// How often the WAL's new pages are handed to the disk while writes come; every `writebackSteps`-th time, a pass
    /// runs instead.
    static let writebackInterval: DispatchTimeInterval = .milliseconds(5)
    static let writebackSteps = 5
    private let catchUpFrames: Int64
    /// Past this many frames the writer waits for every older read to end (see the type's note).
    static func restartFrames(catchUpFrames: Int64) -> Int64 { catchUpFrames * 3 / 2 }
    private let idleDelay: DispatchTimeInterval
    private let walPath: String
    /// The WAL, opened again only to start its writeback; -1 until it opens.
    private var walDescriptor: Int32 = -1
    /// The database file, opened again only to `fdatasync` it.
    private let databaseDescriptor: Int32
    /// Signalled by `stop`; the thread waits on it between passes.
    private let stopping = DispatchSemaphore(value: 0)
    private let stopped = DispatchSemaphore(value: 0)
    /// 16,384 frames: 64 MB of 4 KB pages.
    static let defaultCatchUpFrames: Int64 = 16_384
    /// How much less CPU time this thread gets than a request thread when both want it (`nice` +10 weighs
    /// ~1/10). Its passes come in bursts every `interval`; at the same priority, a burst on a fully busy
    /// 2-core machine delayed the requests on that core: the slow creates came in clusters ~100 ms apart,
    /// and create p99 fell from 4.0–5.1 ms to 3.5–3.9 ms (A/B, alternating runs) when it yielded.
    static let niceness: Int32 = 10

    /// How long the WAL sits unchanged before it is truncated.
    static let defaultIdleDelay: DispatchTimeInterval = .seconds(2)

    /// Ends the snapshots idle read connections keep (`KeptSnapshot`), before each pass: they hold the WAL.
    private let endIdleSnapshots: @Sendable () -> Void

    init(path: String, writer: WriteQueue, interval: DispatchTimeInterval = .milliseconds(100),
         catchUpFrames: Int64 = defaultCatchUpFrames, idleDelay: DispatchTimeInterval = defaultIdleDelay,
         endIdleSnapshots: @escaping @Sendable () -> Void) throws {
        self.endIdleSnapshots = endIdleSnapshots
        connection = try SQLiteConnection(path: path, readOnly: false, pragmas: SQLiteEngine.pragmas)
        databaseDescriptor = open(path, O_RDONLY | O_CLOEXEC)
        self.writer = writer
        self.interval = interval
        self.catchUpFrames = catchUpFrames
        self.idleDelay = idleDelay
        walPath = path + "-wal"
        let thread = Thread { [self] in
            nameCurrentThread("roost-checkpt")
            // Lowering one's own priority needs no privilege. On Linux, `who` 0 is the calling thread alone.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, Checkpointer.niceness)
            run()
        }
        thread.start()
    }

    private func run() {
        var lastPass: (frames: Int64, copied: Int64)?
        var unchangedSince = DispatchTime.now()
        var isActive = false
        var step = 0
        while stopping.wait(timeout: .now() + (isActive ? Checkpointer.writebackInterval : interval)) == .timedOut {
            if isActive {
                step += 1
                if step < Checkpointer.writebackSteps {
                    startWALWriteback()
                    continue
                }
                step = 0
            }
            endIdleSnapshots()
            // A pass that stops short of the WAL's end (writes went on meanwhile) does not sync the
            // database file: the writer's complete checkpoint would then sync every page written
            // since. So a pass that copied anything is followed by a sync here, off the writer.
            guard let pass = Checkpointer.passiveCheckpoint(connection) else { continue }
            isActive = pass != lastPass ?? (0, 0)
            if isActive {
                _ = fdatasync(databaseDescriptor)
                unchangedSince = .now()
            }
            lastPass = pass
            if DispatchTime.now() >= unchangedSince + idleDelay {
                if walFileSize > 0 { truncateWhileIdle() }
                continue
            }
            guard pass.frames >= catchUpFrames else { continue }
            // Each pass copies what came in during the previous one: a few leave the writer little to do.
            for _ in 0..<4 {
                let started = DispatchTime.now().uptimeNanoseconds
                _ = Checkpointer.passiveCheckpoint(connection)
                _ = fdatasync(databaseDescriptor)
                if DispatchTime.now().uptimeNanoseconds - started < 3_000_000 { break }
            }
            // Reads that started before it hold the WAL: a moment for the usual short ones.
            try? writer.withConnection { db in
                try db.withBusyTimeout(milliseconds: 20) { try db.execute("PRAGMA wal_checkpoint(RESTART)", cacheable: false) }
            }
        }
        stopped.signal()
    }

    /// Hands the WAL's dirty pages to the disk without waiting for them (see the type's note).
    private func startWALWriteback() {
        if walDescriptor < 0 { walDescriptor = open(walPath, O_RDONLY | O_CLOEXEC) }
        if walDescriptor >= 0 { _ = roost_start_writeback(walDescriptor) }
    }

    /// Empties the WAL file, unless a read or a write is under way (it is tried again on the next pass).
    private func truncateWhileIdle() {
        try? writer.withConnection { db in
            try db.withBusyTimeout(milliseconds: 0) { try db.execute("PRAGMA wal_checkpoint(TRUNCATE)", cacheable: false) }
        }
    }

    private var walFileSize: Int {
        var status = stat()
        return stat(walPath, &status) == 0 ? Int(status.st_size) : 0
    }

    /// Runs a PASSIVE checkpoint; returns the frames in the WAL and how many of them are in the database.
    private static func passiveCheckpoint(_ connection: SQLiteConnection) -> (frames: Int64, copied: Int64)? {
        // One row: (busy, frames in the WAL, frames checkpointed).
        guard let row = try? connection.fetchRows("PRAGMA wal_checkpoint(PASSIVE)", [], cacheable: true).first,
            row.count == 3, let frames = row[1].integer, let copied = row[2].integer
        else { return nil }
        return (frames, copied)
    }

    /// Ends the thread after the pass in progress, if any. Call once.
    func stop() {
        stopping.signal()
        stopped.wait()
        close(databaseDescriptor)
        if walDescriptor >= 0 { close(walDescriptor) }
    }
}
