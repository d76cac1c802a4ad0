import Foundation

/// The writer's LiveQuery hook: numbers each object write of a recorded class, appends it to the
/// change log (when the log is on) in the write's own transaction, and keeps it for `WriteQueue` to
/// publish after the commit. Used only on the writer's thread.
final class ChangeRecorder {
    /// Whether a class's writes are recorded: with the log, every live class; without, those someone subscribes to.
    let records: @Sendable (String) -> Bool
    let logs: Bool
    /// The last `seq` given out (a rolled-back write leaves a gap: `seq` is ordered, not gapless).
    private(set) var head: Int64

    init(head: Int64, logs: Bool, records: @escaping @Sendable (String) -> Bool) {
        self.head = head
        self.logs = logs
        self.records = records
    }

    /// Records one write of `className` (before: nil for a create; after: nil for a delete).
    func record(_ className: String, before: StoredRow?, after: StoredRow?, in db: any SQLConnection) throws {
        head += 1
        let change = ObjectChange(seq: head, className: className, before: before, after: after)
        if logs { try ChangeLog.append(change, at: Int64(Date().timeIntervalSince1970 * 1000), in: db) }
        db.writeState.objectChanges.append(change)
    }

    /// Records that `className`'s objects changed without a change of their own (a purge, a removed field):
    /// a resume from before this cannot replay it and answers `resumed: false` (the client re-queries).
    func markGap(in className: String, in db: any SQLConnection) throws {
        guard logs, records(className) else { return }
        head += 1
        try ChangeLog.raiseMark(of: className, to: head, in: db)
    }
}
