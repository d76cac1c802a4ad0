import Foundation
import Dispatch
import RoostCore

/// Errors of the storage layer that are not the client's fault.
public enum StorageError: Error, CustomStringConvertible {
    case corruptRow(className: String, objectId: String)

    public var description: String {
        switch self {
        case .corruptRow(let className, let objectId): "stored row \(className)/\(objectId) does not decode"
        }
    }
}

/// The database behind every request, and what the server keeps in memory about it (sessions, schemas,
/// hooks). The `StorageEngine` underneath is SQLite (`SQLiteEngine`, the default) or PostgreSQL (`PostgresEngine`).
///
/// A write closure runs atomically: when `write` returns, its changes are committed.
public final class Storage: Sendable {
    private let engine: any StorageEngine
    let sessions = SessionCache()
    private let schemas = SchemaCache()
    let triggerHooks = TriggerHookCache()
    /// Indexes made for the fields queries keep filtering or sorting on (off until `RoostServer` configures it).
    let autoIndexes = AutoIndexes()
    /// Signalled when a committed write queued a mail (`MailSender` waits on it).
    let mailQueued = Wakeup()
    /// Writes a request leaves behind it, run in order once it has been answered; `close()` waits for them.
    private let deferredWrites = DispatchQueue(label: "roost.deferred-writes")
    private let pendingDeferredWrites = DispatchGroup()
    private let deferredWaiting = WaitingCount()
    /// At most this many deferred writes wait (a flood of requests must not queue work without bound).
    static let maxDeferredWrites = 1_000

    /// How long one read may run before it stops with Parse's 124 (0: no limit).
    let queryTimeoutMilliseconds: UInt64

    /// Opens (creating if needed) the database file at `path` and brings its tables up to date.
    /// - Parameter queryTimeout: seconds one read may run (0: no limit).
    public convenience init(path: String, queryTimeout: Double = 5) throws {
        try self.init(path: path, walCatchUpFrames: Checkpointer.defaultCatchUpFrames, queryTimeout: queryTimeout)
    }

    /// - Parameter walCatchUpFrames: WAL size (in pages) past which the writer completes a checkpoint; see `Checkpointer`.
    /// - Parameter walIdleDelay: how long the WAL sits unchanged before it is truncated; see `Checkpointer`.
    init(path: String, walCatchUpFrames: Int64, queryTimeout: Double = 5,
         walIdleDelay: DispatchTimeInterval = Checkpointer.defaultIdleDelay) throws {
        queryTimeoutMilliseconds = UInt64(max(0, queryTimeout) * 1000)
        engine = try SQLiteEngine(path: path, walCatchUpFrames: walCatchUpFrames, walIdleDelay: walIdleDelay,
                                  schemas: schemas, queryTimeoutMilliseconds: queryTimeoutMilliseconds)
        isShared = false
    }

    /// Opens the PostgreSQL database at `databaseURL` (`postgres://user:password@host:port/database`) and brings
    /// its tables up to date; `poolSize` connections at most.
    public init(databaseURL: String, poolSize: Int, queryTimeout: Double = 5) throws {
        queryTimeoutMilliseconds = UInt64(max(0, queryTimeout) * 1000)
        // Another node's write dropped what this node cached of it (`CacheInvalidation`).
        engine = try PostgresEngine(url: databaseURL, poolSize: poolSize, queryTimeoutMilliseconds: queryTimeoutMilliseconds,
                                    schemas: schemas) {
            [sessions, schemas, triggerHooks] changed in
            if changed.contains(.sessions) { sessions.invalidate() }
            if changed.contains(.schemas) { schemas.invalidate() }
            if changed.contains(.hooks) { triggerHooks.invalidate() }
        }
        isShared = true
    }

    /// Where uploaded files go: the database on PostgreSQL (every node serves them); nil on SQLite (`FileStore`, on disk).
    func databaseFileStorage() -> (any FileStorage)? {
        (engine as? PostgresEngine).map { PostgresFileStore(pool: $0.pool) }
    }

    /// Whether other nodes write to this database too (PostgreSQL): LiveQuery records every live class's writes then,
    /// since their subscribers may be on any node.
    let isShared: Bool

    /// LiveQuery's hook: object writes of the classes `records` names are numbered, appended to the change log
    /// when `logging`, and handed to `onCommit` once committed, in commit order (see `WriteQueue.observeCommits`;
    /// on PostgreSQL every node's commits, see `PostgresChangeFeed`). `onLoss` hears of changes that cannot be handed
    /// on (PostgreSQL only: the log was trimmed before this node read it), up to a `seq`.
    /// With the log, classes already stored that are not recorded get a trim mark (their changes are not logged).
    /// Set once, before serving. Returns the log's head: the last `seq` given out.
    func observeCommits(logging: Bool, records: @escaping @Sendable (String) -> Bool,
                        onCommit: @escaping @Sendable ([ObjectChange]) -> Void,
                        onLoss: @escaping @Sendable (Int64) -> Void) throws -> Int64 {
        try engine.observeCommits(logging: logging, records: records, onCommit: onCommit, onLoss: onLoss)
    }

    /// PostgreSQL: this node has subscribers from `head` on (its feed reads the shared log), or none (the feed lets its
    /// connection go). Nothing on SQLite.
    func followCommits(after head: Int64) { engine.followCommits(after: head) }
    func unfollowCommits() { engine.unfollowCommits() }

    /// Trims the change log to `windowSeconds` and `maxChanges` (see `ChangeLog.trim`); returns how many were dropped.
    @discardableResult
    func trimChangeLog(windowSeconds: Int, maxChanges: Int) throws -> Int {
        try write { db in
            guard let recorder = db.writeState.changeRecorder else { return 0 }
            // On PostgreSQL the numbers are the database's (`PostgresChangeLog`): the head is the log's.
            let head = recorder.numbersAtCommit ? try ChangeLog.head(in: db) : recorder.head
            return try ChangeLog.trim(head: head, windowMilliseconds: Int64(windowSeconds) * 1000, maxChanges: Int64(maxChanges),
                                      now: Int64(Date().timeIntervalSince1970 * 1000), in: db)
        }
    }

    /// How many write transactions are worth running at once (see `StorageEngine.concurrentWrites`).
    var concurrentWrites: Int { engine.concurrentWrites }

    /// Runs `body` atomically; returns once its changes are committed.
    func write<T>(_ body: (any SQLConnection) throws -> T) throws -> T {
        var changedAuthentication = false
        var changedSchema = false
        var queuedMail = false
        var afterCommit: [() -> Void] = []
        // Runs once per attempt: PostgreSQL runs it again after a serialization failure.
        let result = try engine.write { db in
            let state = db.writeState
            state.changedAuthentication = false
            state.changedSchema = false
            state.queuedMail = false
            state.afterCommit.removeAll()
            let value = try body(db)
            changedAuthentication = state.changedAuthentication
            changedSchema = state.changedSchema
            queuedMail = state.queuedMail
            afterCommit = state.afterCommit
            state.afterCommit.removeAll()
            return value
        }
        // After the commit: see `SessionCache` and `SchemaCache`.
        if changedAuthentication { sessions.invalidate() }
        if changedSchema { schemas.invalidate() }
        if queuedMail { mailQueued.signal() }
        for action in afterCommit { action() }
        return result
    }

    /// Runs `body` in one snapshot of the last commit (or as `consistency` says), within the query time limit: past
    /// it, or at shutdown, it stops and throws Parse's 124.
    func read<T>(_ consistency: ReadConsistency, _ body: (any SQLQuerying) throws -> T) throws -> T {
        try engine.read(consistency, body)
    }

    func read<T>(_ body: (any SQLQuerying) throws -> T) throws -> T { try engine.read(.snapshot, body) }

    /// Stops every read in progress and any later one (shutdown: nothing waits for a slow query).
    func interruptReads() { engine.interruptReads() }

    /// Runs `work` (which writes) on a queue of its own 100 ms from now, when the caller's answer has gone out
    /// (started at once, it competed with sending that answer: measurably slower replies); `close()` waits for it.
    /// - Returns: false, queuing nothing, when `maxDeferredWrites` already wait: the caller does the work itself.
    func deferWrite(_ work: @escaping @Sendable () -> Void) -> Bool {
        guard deferredWaiting.add(below: Storage.maxDeferredWrites) else { return false }
        pendingDeferredWrites.enter()
        deferredWrites.asyncAfter(deadline: .now() + .milliseconds(100)) { [pendingDeferredWrites, deferredWaiting] in
            work()
            deferredWaiting.remove()
            pendingDeferredWrites.leave()
        }
        return true
    }

    /// Waits for the deferred writes, then closes the database. No request may be running.
    public func close() throws {
        pendingDeferredWrites.wait()  // The deferred writes first, while the writer is open.
        try engine.close()
    }
}

/// A count of waiting work, bounded by its callers.
private final class WaitingCount: @unchecked Sendable {  // `value` only under `lock`.
    private let lock = NSLock()
    private var value = 0

    /// Counts one more unless `limit` already wait; whether it did.
    func add(below limit: Int) -> Bool {
        lock.withLock {
            guard value < limit else { return false }
            value += 1
            return true
        }
    }

    func remove() { lock.withLock { value -= 1 } }
}
