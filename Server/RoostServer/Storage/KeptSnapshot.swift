import Foundation
import Synchronization

/// A read connection's transaction, kept open from one read to the next while nothing was committed in between.
///
/// Beginning a read transaction in WAL mode takes a read mark in the shared `-shm` index, under a mutex every
/// connection of the process shares (and, when the first or last reader comes or goes, an `fcntl` lock): the HTTP
/// threads queued on it (`perf`/`strace` under gets: 1.3 `futex` calls and 0.6 `fcntl` per get). A read that finds no
/// commit (and no schema change) since its connection's snapshot began answers from that snapshot, which is still
/// the newest: no BEGIN, COMMIT or read mark. Measured with wrk (2 × 16, 10,000 objects, gets, 10 pairs of 8 s runs
/// alternating the builds): gets/s higher in 9 pairs (median +10 %), CPU per get lower in 9 (median −10 %), p99 lower
/// in 7; `futex` calls per get 1.3 → 0.03, `fcntl` 0.6 → 0.005 (`strace -c`).
///
/// A kept snapshot holds the WAL (a checkpoint cannot copy past it, nor the WAL start over), so whoever checkpoints
/// first ends the snapshots no read is using (`endIfIdle`, from the `Checkpointer`'s every pass and from the writer
/// connection's busy handler while a checkpoint waits for readers): an idle thread cannot keep one for long.
final class KeptSnapshot: @unchecked Sendable {
    /// What had been committed when a snapshot began: the writer's commits and the schema cache's generation.
    struct Generations: Equatable {
        let commits: UInt64
        let schemas: UInt64
    }

    /// Held by the connection's thread for a whole read, and by `endIfIdle` for a moment. Recursive: a read inside
    /// a read (on the same thread) runs in the outer one's snapshot rather than wait for itself.
    private let lock = NSRecursiveLock()
    /// Guarded by `lock`: set while the connection is inside a transaction this type began.
    private var begunAt: Generations?
    /// Guarded by `lock`: how many reads are running (more than one: nested).
    private var depth = 0

    /// Runs `body` on `connection` in a snapshot that contains every commit counted in `now` (the snapshot kept
    /// from an earlier read if nothing was committed since, a new one otherwise). A read that throws ends it.
    func read<T>(on connection: SQLiteConnection, at now: Generations, _ body: () throws -> T) throws -> T {
        lock.lock()
        defer { lock.unlock() }
        if depth > 0 {
            depth += 1
            defer { depth -= 1 }
            return try body()
        }
        depth = 1
        defer { depth = 0 }
        if let begunAt, begunAt != now { end(on: connection) }
        if begunAt == nil {
            // A ROLLBACK that failed (see `end`) left one open: the BEGIN would fail.
            if connection.isInTransaction { try connection.execute("ROLLBACK") }
            // Deferred: the snapshot begins with the body's first statement, after `now` was noted.
            try connection.execute("BEGIN")
            begunAt = now
        }
        do {
            return try body()
        } catch {
            end(on: connection)
            throw error
        }
    }

    /// Ends the kept snapshot unless a read is using it now. Callable from any thread, the reading one included (a
    /// write inside a read can wait for a lock: the writer's busy handler calls this), where the recursive lock
    /// lets it in: `depth` keeps it from ending that read's snapshot.
    func endIfIdle(on connection: SQLiteConnection) {
        guard lock.try() else { return }
        defer { lock.unlock() }
        if depth == 0, begunAt != nil { end(on: connection) }
    }

    /// A read-only transaction: nothing to commit or lose.
    private func end(on connection: SQLiteConnection) {
        try? connection.execute("ROLLBACK")
        begunAt = nil
    }
}

/// Counts the writer's commits (SQLite's WAL hook runs after each one that wrote: `SQLiteConnection.restartWAL`), so
/// a read connection knows whether the snapshot it kept is still the newest.
final class CommitCounter: Sendable {
    private let count = Atomic<UInt64>(0)
    var current: UInt64 { count.load(ordering: .acquiring) }
    func increment() { count.add(1, ordering: .releasing) }
}
