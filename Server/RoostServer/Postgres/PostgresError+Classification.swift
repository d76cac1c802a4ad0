/// The questions the stores ask of `SQLiteError`, asked of PostgreSQL's errors, so a store catches one condition
/// on either database (`catch let error as SQLiteError where error.isUniqueViolation` today).
///
/// | SQLite (extended result code)            | PostgreSQL (SQLSTATE)                                          |
/// |------------------------------------------|----------------------------------------------------------------|
/// | SQLITE_CONSTRAINT_PRIMARYKEY             | 23505 on a primary key (`<table>_pkey`, PostgreSQL's own name)  |
/// | SQLITE_CONSTRAINT_UNIQUE                 | 23505 on any other unique constraint or index                  |
/// | SQLITE_FULL                              | 53100 disk_full                                                |
/// | SQLITE_INTERRUPT (time limit, shutdown)  | 57014 query_canceled (statement_timeout, a cancel request)     |
/// | SQLITE_BUSY (lock wait timed out)        | 55P03 lock_not_available (lock_timeout, NOWAIT)                |
///
/// PostgreSQL reports both key violations as 23505; the constraint's name tells them apart. The migrations
/// (`PostgresSchema`) leave every primary key its default name and name no other constraint or index `..._pkey`.
extension PostgresError: DatabaseError {
    /// A primary key would hold a value twice (SQLITE_CONSTRAINT_PRIMARYKEY): `_idempotency.requestId`, ...
    var isPrimaryKeyViolation: Bool {
        sqlState == .uniqueViolation && constraint?.hasSuffix("_pkey") == true
    }

    /// A unique constraint or index other than a primary key would hold a value twice (SQLITE_CONSTRAINT_UNIQUE): a
    /// class table's `objectId`, `_User`'s lower-cased username and email, `_session.tokenHash`, ...
    var isUniqueViolation: Bool {
        sqlState == .uniqueViolation && !isPrimaryKeyViolation
    }

    /// The server's disk has no room left (SQLITE_FULL).
    var isDiskFull: Bool { sqlState == .diskFull }

    /// The statement was stopped: its time limit (`statement_timeout`) or a cancel request (SQLITE_INTERRUPT, which
    /// `Storage.read` answers as Parse's 124).
    var isInterrupted: Bool { sqlState == .queryCanceled }

    /// A lock was not granted in time (SQLITE_BUSY). Serialization failures and deadlocks are `isRetryable` instead:
    /// SQLite's single writer never meets them.
    var isBusy: Bool { sqlState == .lockNotAvailable }

    /// The transaction failed only because of others running at the same time: run it again from the start.
    var isRetryable: Bool { sqlState?.isRetryable == true }
}

extension SQLState {
    public static let diskFull = SQLState(rawValue: "53100")
    public static let lockNotAvailable = SQLState(rawValue: "55P03")
}
