/// One object write inside a transaction, recorded for LiveQuery (`SQLiteConnection.recordsChanges`):
/// the version before (nil for a create) and after (nil for a delete). Published once its transaction
/// has committed, in commit order (`WriteQueue`), and dropped with a rolled-back savepoint or transaction.
struct ObjectChange: Sendable {
    let className: String
    let before: StoredObject?
    let after: StoredObject?
}
