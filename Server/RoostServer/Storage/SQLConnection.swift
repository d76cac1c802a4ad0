/// The storage seam: what the stores (objects, users, sessions, schemas, relations, tokens, mail...) run
/// their SQL on inside `Storage.write`. SQLite's lean connection conforms; PostgreSQL's is to follow.
///
/// Store code writes one SQL text with `?` placeholders wherever the two databases agree, and asks
/// `dialect` for the few statements where they do not. Not `Sendable`: one thread uses a connection at a time.
protocol SQLConnection: AnyObject, SQLQuerying {
    /// Runs one statement that returns no rows. Call `execute`, which has the defaults.
    func run(_ sql: String, _ arguments: [SQLValue], cacheable: Bool) throws
    /// Rows changed by the last INSERT, UPDATE or DELETE.
    var changes: Int { get }
    /// What the current write transaction did that others act on once it commits.
    var writeState: WriteState { get }
    /// Runs a statement whose answer nobody waits for (no parameters, no rows: SAVEPOINT, RELEASE): at once on
    /// SQLite; on PostgreSQL it goes out with the next statement, in that one's round trip.
    func runSoon(_ sql: String) throws
    /// Takes back what `runSoon` was given last if it has not gone out (nothing ran since); whether it did.
    func withdrawIfUnsent(_ sql: String) -> Bool
    /// Where the next statement given to `runSoon` or `runAnsweredLater` goes in the queue of those not sent yet.
    var unsentPosition: UnsentPosition { get }
    /// Takes back what was queued from `position` on, if none of it has gone out; whether none had. When some had,
    /// what is still unsent was all queued after `position`, and is taken back all the same (the caller undoes the
    /// rest, with ROLLBACK TO).
    func withdrawUnsent(from position: UnsentPosition) -> Bool
    /// Runs a statement whose answer its caller does not use (no rows, no `changes`): at once on SQLite, and on
    /// PostgreSQL outside `answeringLater`; inside it, the statement goes out with the next one, in its round trip,
    /// and an error it meets is thrown there instead.
    func runAnsweredLater(_ sql: String, _ arguments: [SQLValue]) throws
    /// Sends what `runAnsweredLater` queued and waits for the answers (nothing to do on SQLite).
    func awaitAnswers() throws
    /// Whether `inSavepoint` may name savepoints by their depth (see there): true where every statement runs at once.
    var namesSavepointsByDepth: Bool { get }
}

/// A place in a connection's queue of statements not sent yet (PostgreSQL's `sendWithNext`): its index in the queue,
/// valid while no pipeline has sent the queue (`pipeline` counts those).
struct UnsentPosition: Equatable {
    var pipeline = 0
    var index = 0
}

/// The SQL a connection speaks.
enum SQLDialect: Sendable {
    case sqlite
    case postgres

}

/// A database error the stores tell apart, whichever database raised it.
protocol DatabaseError: Error {
    /// A row with the same primary key exists.
    var isPrimaryKeyViolation: Bool { get }
    /// A unique index refused the row.
    var isUniqueViolation: Bool { get }
    /// The disk (or the file system holding the database) has no room left.
    var isDiskFull: Bool { get }
    /// The statement was stopped: past the query time limit, or at shutdown.
    var isInterrupted: Bool { get }
}

/// What one write transaction did, read by `Storage.write` after it commits, and what undoing it
/// must redo. Starts over with every transaction.
final class WriteState {
    /// Set by writes that change sessions or roles: the session cache is invalidated after commit.
    var changedAuthentication = false
    /// Set by `schemaChanged()`: the readers' `SchemaCache` is invalidated after commit.
    var changedSchema = false
    /// Set by a write to the trigger webhooks (`HookStore`): other nodes drop their `TriggerHookCache` (`CacheInvalidation`).
    /// Reset by `PostgresEngine` for each transaction (unused on SQLite, where `HookRoutes` drops the one cache).
    var changedHooks = false
    /// A serialization failure or deadlock a savepoint caught (`inSavepoint`): its caller answers the item, but the
    /// whole transaction must run again (`PostgresEngine.write` throws it after the body), or the item got a 500.
    var retryableFailure: (any Error)?
    /// Set by a write that queued a mail (`MailOutbox`): the sender is woken once it has committed.
    var queuedMail = false
    /// Set by `answeringLater`: `runAnsweredLater` may queue its statement (PostgreSQL).
    var answersLater = false
    /// Savepoints made so far, and those open now (`inSavepoint`, which names each by one of them).
    var savepointsMade = 0
    var savepointDepth = 0
    /// LiveQuery's hook, which `ObjectStore` tells each write of a recorded class (nil: none are),
    /// and what it recorded in the current transaction (published once committed).
    var changeRecorder: ChangeRecorder?
    var objectChanges: [ObjectChange] = []
    /// PostgreSQL: the rows the transaction's statements added to and removed from class tables (`PostgresRowCount`).
    /// Unused on SQLite, whose triggers count (`RowCount`).
    var rowCountChanges: [RowCountChange] = []
    /// What to do once the transaction has committed (`after` trigger webhooks), in order. Emptied when the
    /// transaction starts over (a PostgreSQL retry) and cut back when a savepoint is undone: nothing runs for a
    /// write that was not committed, and nothing twice.
    var afterCommit: [() -> Void] = []
    /// Writes made with `survivingRollback` in the current transaction, made again after a rollback.
    var rollbackProofWrites: [(any SQLConnection) throws -> Void] = []
    /// The writer's decoded `_schema` rows by class name. Only the writer changes `_schema`, so its
    /// view is always current; `SchemaStore` clears this on every schema change, and any rollback
    /// clears it too. Read-only connections never use it (their snapshots move with other commits).
    var schemaCache: [String: ClassSchema] = [:]
}

extension SQLConnection {
    func execute(_ sql: String, _ arguments: [SQLValue] = [], cacheable: Bool = true) throws {
        try run(sql, arguments, cacheable: cacheable)
    }

    var changedAuthentication: Bool {
        get { writeState.changedAuthentication }
        set { writeState.changedAuthentication = newValue }
    }
    var queuedMail: Bool {
        get { writeState.queuedMail }
        set { writeState.queuedMail = newValue }
    }
    /// Runs `action` once the enclosing transaction has committed (never if it does not).
    func afterCommit(_ action: @escaping () -> Void) { writeState.afterCommit.append(action) }

    var schemaCache: [String: ClassSchema] {
        get { writeState.schemaCache }
        set { writeState.schemaCache = newValue }
    }

    /// Called by every write to `_schema`: the writer's cache starts over, the readers' after the commit.
    func schemaChanged() {
        writeState.schemaCache.removeAll()
        writeState.changedSchema = true
    }

    /// Notes that a statement added `rows` rows to the class's table (negative: removed them), for the count
    /// PostgreSQL keeps (`PostgresRowCount`). SQLite's triggers count by themselves (`RowCount`); a view has no count.
    func countRows(_ rows: Int64, in schema: ClassSchema) {
        guard dialect == .postgres, schema.view == nil, rows != 0 else { return }
        writeState.rowCountChanges.append(RowCountChange(tableID: schema.id, rows: rows))
    }

    /// The recorder, when it records `className`'s writes.
    func recorder(for className: String) -> ChangeRecorder? {
        guard let recorder = writeState.changeRecorder, recorder.records(className) else { return nil }
        return recorder
    }

    /// Runs `body` in a savepoint inside the current transaction: its changes are undone if it throws, and the
    /// transaction stays usable (PostgreSQL aborts a whole transaction at its first error unless a savepoint catches it).
    func inSavepoint<T>(_ body: () throws -> T) throws -> T {
        try inSavepoint(rerun: false, body)
    }

    /// As `inSavepoint`, for a body its caller runs again when it throws: what it wrote with `survivingRollback` is
    /// undone with the rest (the next run writes it again), not made once more.
    func inSavepointToRunAgain<T>(_ body: () throws -> T) throws -> T {
        try inSavepoint(rerun: true, body)
    }

    private func inSavepoint<T>(rerun: Bool, _ body: () throws -> T) throws -> T {
        // On PostgreSQL each its own name: an error answered later (`answeringLater`) can reach a savepoint after
        // another whose RELEASE never ran (an enclosing one, or a batch item before), and ROLLBACK TO names the latest
        // of a name. On SQLite, where every statement runs at once, the one before at this depth was released or
        // rolled back before this one begins: named by depth, the texts repeat and stay prepared in the statement
        // cache (a name each prepared two statements per write, and emptied the cache every ~128 writes).
        writeState.savepointsMade &+= 1
        writeState.savepointDepth += 1
        defer { writeState.savepointDepth -= 1 }
        let name = namesSavepointsByDepth ? "depth\(writeState.savepointDepth)" : "request\(writeState.savepointsMade)"
        let position = unsentPosition
        try runSoon("SAVEPOINT " + name)
        let recorded = writeState.objectChanges.count
        let counted = writeState.rowCountChanges.count
        let actionsAfterCommit = writeState.afterCommit.count
        let proofRecorded = writeState.rollbackProofWrites.count
        do {
            let result = try body()
            // A body that ran no statement needs no savepoint (PostgreSQL: it has not gone out).
            if !withdrawIfUnsent("SAVEPOINT " + name) { try runSoon("RELEASE SAVEPOINT " + name) }
            return result
        } catch {
            if let failure = error as? PostgresError, failure.isRetryable { writeState.retryableFailure = failure }
            writeState.schemaCache.removeAll()
            writeState.objectChanges.removeSubrange(min(recorded, writeState.objectChanges.count)...)
            writeState.rowCountChanges.removeSubrange(min(counted, writeState.rowCountChanges.count)...)
            writeState.afterCommit.removeSubrange(min(actionsAfterCommit, writeState.afterCommit.count)...)
            if !withdrawUnsent(from: position) {
                try? execute("ROLLBACK TO SAVEPOINT " + name)
                try? execute("RELEASE SAVEPOINT " + name)
            }
            if rerun {
                writeState.rollbackProofWrites.removeSubrange(min(proofRecorded, writeState.rollbackProofWrites.count)...)
            } else {
                // Kept in the list: an enclosing savepoint or transaction undone later makes them once more.
                let proof = writeState.rollbackProofWrites
                for write in proof[min(proofRecorded, proof.count)...] { try? write(self) }
            }
            throw error
        }
    }

    /// Runs `body` with `runAnsweredLater`'s statements queued to go out together, then sends them and waits for
    /// their answers. Only for a body whose caller runs it again, every statement awaited, when it fails
    /// (`WriteBatcher.write`'s one-savepoint run): a queued statement's error is thrown by a later statement or by the
    /// wait here, not by the call that queued it. Saves PostgreSQL's writer a round trip per create of a group.
    func answeringLater<T>(_ body: () throws -> T) throws -> T {
        let before = writeState.answersLater
        writeState.answersLater = true
        defer { writeState.answersLater = before }
        let result = try body()
        try awaitAnswers()
        return result
    }

    /// Runs `write` now and, should the transaction or a savepoint around it be undone, again after that:
    /// for what a failing request must still leave behind (a failed log-in counts towards the lockout even
    /// as a batch item, whose savepoint its error undoes). `write` must apply a change relative to what it finds.
    func survivingRollback(_ write: @escaping (any SQLConnection) throws -> Void) throws {
        try write(self)
        writeState.rollbackProofWrites.append(write)
    }
}
