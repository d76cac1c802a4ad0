/// One object write inside a transaction, recorded for LiveQuery (`ChangeRecorder`): the version before
/// (nil for a create) and after (nil for a delete), as stored (decoded only by a subscriber that needs them),
/// and its place in the change log. Published once its transaction has committed, in commit order
/// (`WriteQueue`), and dropped with a rolled-back savepoint or transaction. On PostgreSQL it is numbered (and logged)
/// at the end of its transaction (`PostgresChangeLog`), and one with neither version there is a gap mark (`markGap`).
struct ObjectChange: Sendable {
    let seq: Int64
    let className: String
    let before: StoredRow?
    let after: StoredRow?
}
