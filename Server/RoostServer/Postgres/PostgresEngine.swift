import Foundation
import RoostCore
import Synchronization

/// PostgreSQL under `Storage` (`roost serve --database-url postgres://...`): a pool of connections shared by the
/// request threads. Every write is one SERIALIZABLE transaction, run again from the start when PostgreSQL reports
/// a serialization failure or a deadlock: the stores were written for SQLite's single writer (read, decide,
/// write), and serializable transactions keep that reasoning true with many writers, on one node or several.
/// A read is one REPEATABLE READ READ ONLY transaction (one snapshot, as on SQLite), or, for a request whose statements
/// need not agree with each other, its statements alone (`ReadConsistency.eachStatement`).
/// LiveQuery: a write's recorded changes are numbered and logged last in its transaction (`PostgresChangeLog`), and
/// every node's `PostgresChangeFeed` hands every node's commits to its LiveQuery server.
final class PostgresEngine: StorageEngine {
    /// Also lent to `PostgresFileStore`: file chunks are read and written outside the stores' transactions.
    let pool: PostgresPool
    private let queryTimeoutMilliseconds: UInt64
    /// Decoded schemas for the reads, dropped after a schema change commits here (`Storage.write`) or on another
    /// node (`CacheInvalidation`).
    private let schemas: SchemaCache
    /// Tells the other nodes what a write changed of what they cache, and drops what theirs changed here.
    private let cacheInvalidation: CacheInvalidation
    /// Folds the rows writes add to `_rows` (`PostgresRowCount`) now and then.
    private let rowCountCompactor: RowCountCompactor
    /// LiveQuery's: which classes' writes are recorded (set once, by `observeCommits`), and the feed of every node's commits.
    private let recording = Mutex<RecordedClasses?>(nil)
    private let feed = Mutex<PostgresChangeFeed?>(nil)
    /// Two write groups at once: a group waits on a round trip per request, and PostgreSQL runs transactions side by
    /// side (serializable: two that touch the same rows are run again). Measured with wrk creating (16 connections,
    /// 2 cores): 1 writer 2.9–3.2k/s, 2 writers 4.1–4.7k/s, 3 writers 3.7k/s.
    var concurrentWrites: Int { 2 }
    /// How many times a write runs before its serialization failure reaches the client (as a 500 with code 1).
    static let writeAttempts = 20
    /// This node's write transactions take turns through it once one has failed a few times (see `transaction`).
    private let turns = WriterGate()

    /// Connects, and brings the database's tables up to date (`PostgresSchema`, safe when nodes start together).
    /// - Parameter invalidate: drops what another node's committed write changed of this node's caches.
    init(url: String, poolSize: Int, queryTimeoutMilliseconds: UInt64, schemas: SchemaCache,
         invalidate: @escaping @Sendable (CachedState) -> Void) throws {
        pool = try PostgresPool(url: url, size: poolSize)
        self.queryTimeoutMilliseconds = queryTimeoutMilliseconds
        self.schemas = schemas
        _ = try pool.withConnection { try PostgresSchema.migrate($0) }
        cacheInvalidation = try CacheInvalidation(url: pool.url, invalidate: invalidate)
        rowCountCompactor = RowCountCompactor(pool: pool)
    }

    func write<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        let records = recording.withLock { $0 }?.records
        var countRowsSent = 0
        defer { rowCountCompactor.added(countRowsSent) }
        return try pool.withConnection { connection in
            let state = connection.writeState
            state.changeRecorder = records.map { ChangeRecorder(head: 0, logs: true, records: $0, numbersAtCommit: true) }
            do {
                return try connection.transaction(.serializable, attempts: Self.writeAttempts, statementTimeout: nil, takingTurnsIn: turns) { connection in
                    // Another connection or node may have changed a schema since this one last wrote.
                    state.schemaCache.removeAll()
                    state.objectChanges.removeAll()
                    state.rowCountChanges.removeAll()
                    state.rollbackProofWrites.removeAll()
                    state.changedHooks = false
                    state.retryableFailure = nil
                    let result = try body(connection)
                    // A savepoint caught a serialization failure (a batch item, a grouped request): the whole transaction runs again.
                    if let failure = state.retryableFailure { throw failure }
                    try cacheInvalidation.announce(state, on: connection)  // Delivered at the commit.
                    countRowsSent = try PostgresRowCount.send(state.rowCountChanges, in: connection)
                    state.rowCountChanges.removeAll()
                    // Last: numbering takes the lock that orders commits with changes (`PostgresChangeLog`).
                    try PostgresChangeLog.append(state.objectChanges, in: connection)
                    state.objectChanges.removeAll()  // Every node's feed hands them on, this one's too.
                    return result
                }
            } catch {
                // What `survivingRollback` kept is written again, in a transaction of its own.
                let kept = state.rollbackProofWrites
                state.rollbackProofWrites.removeAll()
                state.objectChanges.removeAll()
                state.rowCountChanges.removeAll()
                countRowsSent = 0
                if !kept.isEmpty {
                    _ = try? connection.transaction(.serializable, attempts: Self.writeAttempts, statementTimeout: nil, takingTurnsIn: turns) { connection in
                        state.schemaCache.removeAll()  // It may hold schemas of the transaction that rolled back.
                        state.rowCountChanges.removeAll()  // Each attempt counts its own.
                        for write in kept { try write(connection) }
                        countRowsSent = try PostgresRowCount.send(state.rowCountChanges, in: connection)
                        state.rowCountChanges.removeAll()
                    }
                }
                throw error
            }
        }
    }

    /// Every statement of a read runs within the query time limit (0 is PostgreSQL's "none" too).
    func read<T>(_ consistency: ReadConsistency, _ body: (any SQLQuerying) throws -> T) throws -> T {
        do {
            return try pool.withConnection { connection in
                // Noted before the snapshot begins (at the transaction's first statement), as `SQLiteEngine.read` does.
                connection.readerSchemas = (schemas, schemas.currentGeneration)
                defer { connection.readerSchemas = nil }
                switch consistency {
                case .snapshot:
                    return try connection.transaction(.repeatableReadOnly, statementTimeout: queryTimeoutMilliseconds,
                                                      awaitingCommit: false) { try body($0) }
                case .eachStatement:
                    return try connection.withoutTransaction(statementTimeout: queryTimeoutMilliseconds) { try body($0) }
                }
            }
        } catch let error as PostgresError where error.isInterrupted {
            throw ParseError(.timeout, "The query took longer than the time limit (--query-timeout)")
        }
    }

    /// Every node's commits reach `onCommit` through the shared change log (`PostgresChangeLog`, `PostgresChangeFeed`),
    /// which is always written here: it is how changes travel between nodes (`logging` only decides resumes).
    func observeCommits(logging: Bool, records: @escaping @Sendable (String) -> Bool,
                        onCommit: @escaping @Sendable ([ObjectChange]) -> Void,
                        onLoss: @escaping @Sendable (Int64) -> Void) throws -> Int64 {
        let head = try pool.withConnection { db in
            try PostgresChangeLog.begin(unrecorded: { $0.filter { !records($0) } }, in: db)
        }
        recording.withLock { $0 = RecordedClasses(records: records) }
        let started = PostgresChangeFeed(url: pool.url, after: head, deliver: onCommit, lost: onLoss)
        feed.withLock { $0 = started }
        return head
    }

    func followCommits(after head: Int64) { feed.withLock { $0 }?.follow(after: head) }

    func unfollowCommits() { feed.withLock { $0 }?.unfollow() }

    /// Statements in progress end at their `statement_timeout`; new reads cannot start once the pool closes.
    func interruptReads() {}

    func close() throws {
        cacheInvalidation.stop()
        feed.withLock { $0 }?.stop()
        pool.close()
    }
}

/// Which classes' writes LiveQuery records, in a class of its own: a closure kept in a `Mutex` itself came back from
/// each `withLock` (its `inout`) wrapped in one more reabstraction thunk, so every write called through a longer chain
/// (measured: over 127 deep after a few seconds of creates, 7 % of the writer's time, growing).
private final class RecordedClasses: Sendable {
    let records: @Sendable (String) -> Bool

    init(records: @escaping @Sendable (String) -> Bool) { self.records = records }
}
