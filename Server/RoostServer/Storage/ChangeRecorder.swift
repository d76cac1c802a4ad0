import Foundation

/// The writer's LiveQuery hook: numbers each object write of a recorded class, appends it to the
/// change log (when the log is on) in the write's own transaction, and keeps it for `WriteQueue` to
/// publish after the commit. Used only on the writer's thread.
///
/// On PostgreSQL (`numbersAtCommit`) a recorder serves one transaction of one pool connection: writes and gap marks
/// are kept in `objectChanges` unnumbered (seq 0; a mark has neither version), and `PostgresChangeLog.append`
/// numbers and logs them at the end of the transaction, under the lock that makes `seq` order commit order.
final class ChangeRecorder {
    /// Whether a class's writes are recorded: with the log, every live class; without, those someone subscribes to.
    let records: @Sendable (String) -> Bool
    let logs: Bool
    /// The last `seq` given out (a rolled-back write leaves a gap: `seq` is ordered, not gapless).
    private(set) var head: Int64
    /// PostgreSQL: numbered and logged when the transaction ends (`PostgresChangeLog`), not here.
    let numbersAtCommit: Bool

    init(head: Int64, logs: Bool, records: @escaping @Sendable (String) -> Bool, numbersAtCommit: Bool = false) {
        self.head = head
        self.logs = logs
        self.records = records
        self.numbersAtCommit = numbersAtCommit
    }

    /// Records one write of `className` (before: nil for a create; after: nil for a delete).
    func record(_ className: String, before: StoredRow?, after: StoredRow?, in db: any SQLConnection) throws {
        if numbersAtCommit {
            return db.writeState.objectChanges.append(ObjectChange(seq: 0, className: className, before: before, after: after))
        }
        head += 1
        let change = ObjectChange(seq: head, className: className, before: before, after: after)
        if logs { try ChangeLog.append(change, at: Int64(Date().timeIntervalSince1970 * 1000), in: db) }
        db.writeState.objectChanges.append(change)
    }

    /// Records that `className`'s objects changed without a change of their own (a purge, a removed field):
    /// a resume from before this cannot replay it and answers `resumed: false` (the client re-queries).
    func markGap(in className: String, in db: any SQLConnection) throws {
        guard logs, records(className) else { return }
        if numbersAtCommit {
            return db.writeState.objectChanges.append(ObjectChange(seq: 0, className: className, before: nil, after: nil))
        }
        head += 1
        try ChangeLog.raiseMark(of: className, to: head, in: db)
    }
}
