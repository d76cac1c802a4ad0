import CSQLite
import Dispatch
import Foundation
import GRDB
import RoostCore

/// SQLite in WAL mode: one writer with group commit (`WriteQueue`) and one read-only connection per worker
/// thread (`ReaderPool`); the `Checkpointer` keeps the WAL in bounds. GRDB creates the file and runs the migrations.
final class SQLiteEngine: StorageEngine {
    private let writer: WriteQueue
    private let readers: ReaderPool
    private let commits = CommitCounter()
    private let checkpointer: Checkpointer
    private let schemas: SchemaCache
    private let queryTimeoutMilliseconds: UInt64

    /// Every pragma of the request connections in one place. With WAL, `synchronous=NORMAL` keeps
    /// commits atomic and durable across a process crash without an fsync per commit.
    static let pragmas = """
        PRAGMA synchronous = NORMAL;
        PRAGMA foreign_keys = ON;
        PRAGMA temp_store = MEMORY;
        PRAGMA cache_size = -4000;
        """

    init(path: String, walCatchUpFrames: Int64, walIdleDelay: DispatchTimeInterval, schemas: SchemaCache,
         queryTimeoutMilliseconds: UInt64) throws {
        self.schemas = schemas
        self.queryTimeoutMilliseconds = queryTimeoutMilliseconds
        _ = SQLiteEngine.configureSQLite
        let pool = try DatabasePool(path: path, configuration: SQLiteEngine.migrationConfiguration)  // Also switches the file to WAL.
        try SQLiteEngine.migrator.migrate(pool)
        try pool.close()
        // The Checkpointer checkpoints. The WAL restarts at ~64 MB under load (see `Checkpointer`). The backstop,
        // for when the low-priority Checkpointer gets no CPU or a long read holds the WAL: the commit that takes
        // it past 1.5 × the catch-up size (96 MB) restarts it, waiting for older reads (a read lasts at most the
        // query time limit), so it stays under 128 MB; the file is cut back to 128 MB when it starts over.
        let writerPragmas = SQLiteEngine.pragmas + "PRAGMA wal_autocheckpoint = 0; PRAGMA journal_size_limit = 134217728;"
        let readers = ReaderPool(path: path)
        let endIdleSnapshots: @Sendable () -> Void = { readers.endIdleSnapshots() }
        let writerConnection = try SQLiteConnection(path: path, readOnly: false, pragmas: writerPragmas)
        writerConnection.restartWAL(atFrames: Int32(clamping: Checkpointer.restartFrames(catchUpFrames: walCatchUpFrames)),
                                    counting: commits)
        writerConnection.endIdleSnapshots = endIdleSnapshots
        try writerConnection.inTransaction(immediate: true) { try TextIndex.flushAll(in: writerConnection) }
        writer = WriteQueue(connection: writerConnection)
        self.readers = readers
        checkpointer = try Checkpointer(path: path, writer: writer, catchUpFrames: walCatchUpFrames, idleDelay: walIdleDelay,
                                        endIdleSnapshots: endIdleSnapshots)
    }

    /// Runs `body` on the writer inside a group transaction; returns once committed.
    func write<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        try writer.write { try body($0) }
    }

    /// Runs `body` on the calling thread's read connection, in one snapshot of the last commit (whatever the
    /// consistency asked: the stronger one costs nothing here; kept from the thread's previous read when nothing
    /// was committed since, see `KeptSnapshot`), within the query time limit: past it, or at shutdown, it stops and
    /// throws Parse's 124.
    func read<T>(_ consistency: ReadConsistency, _ body: (any SQLQuerying) throws -> T) throws -> T {
        let reader = try readers.reader()
        // Noted before a new snapshot begins (the first statement after the deferred BEGIN).
        let now = KeptSnapshot.Generations(commits: commits.current, schemas: schemas.currentGeneration)
        let outer = reader.readerSchemas  // Set when this read runs inside another, in its snapshot.
        if outer == nil { reader.readerSchemas = (schemas, now.schemas) }
        let timed = reader.budget.begin(milliseconds: queryTimeoutMilliseconds)
        defer {
            reader.readerSchemas = outer
            if timed { reader.budget.end() }
        }
        do {
            return try reader.keptSnapshot.read(on: reader, at: now) { try body(reader) }
        } catch let error as SQLiteError where error.isInterrupted {
            if reader.budget.regexGaveUp {
                throw ParseError(.invalidQuery, "$regex took too long: the pattern backtracks too much on a stored value")
            }
            throw ParseError(.timeout, "The query took longer than the time limit (--query-timeout)")
        }
    }

    /// One writer: nothing is ever lost on the way to `onCommit` (`onLoss` is never called).
    func observeCommits(logging: Bool, records: @escaping @Sendable (String) -> Bool,
                        onCommit: @escaping @Sendable ([ObjectChange]) -> Void,
                        onLoss: @escaping @Sendable (Int64) -> Void) throws -> Int64 {
        let head = try writer.withConnection { db -> Int64 in
            let head = try ChangeLog.head(in: db)
            guard logging else { return head }
            // `_Session` has no `_schema` row (its rows live in `_session`) and is recorded too (`SessionStore`).
            let classes = try db.fetchRows("SELECT className FROM _schema", [], cacheable: false).compactMap { $0.first?.text }
                + [SessionStore.className]
            return try db.inTransaction(immediate: true) { try ChangeLog.markUnlogged(classes.filter { !records($0) }, head: head, in: db) }
        }
        try writer.observeCommits(with: ChangeRecorder(head: head, logs: logging, records: records), onCommit: onCommit)
        return head
    }

    func interruptReads() { readers.interruptAll() }

    /// Checkpoints the WAL into the database file and closes every connection.
    func close() throws {
        checkpointer.stop()
        readers.close()
        try writer.withConnection { try $0.execute("PRAGMA wal_checkpoint(TRUNCATE)", cacheable: false) }
    }
}
