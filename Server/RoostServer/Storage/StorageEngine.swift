/// The database under `Storage`: runs its writes atomically and its reads in one snapshot.
/// `SQLiteEngine` is the default; `Storage` keeps everything that does not depend on which it is.
protocol StorageEngine: AnyObject, Sendable {
    /// Runs `body` in one transaction; returns once its changes are committed.
    func write<T>(_ body: (any SQLConnection) throws -> T) throws -> T
    /// Runs `body` within the query time limit (past it: Parse's 124), its statements seeing the data as
    /// `consistency` says.
    func read<T>(_ consistency: ReadConsistency, _ body: (any SQLQuerying) throws -> T) throws -> T
    /// LiveQuery's hook (see `Storage.observeCommits`). Returns the change log's head.
    func observeCommits(logging: Bool, records: @escaping @Sendable (String) -> Bool,
                        onCommit: @escaping @Sendable ([ObjectChange]) -> Void,
                        onLoss: @escaping @Sendable (Int64) -> Void) throws -> Int64
    /// PostgreSQL: this node has subscribers again, from `head` on, or none (see `PostgresChangeFeed`).
    func followCommits(after head: Int64)
    func unfollowCommits()
    /// Stops every read in progress and any later one (shutdown: nothing waits for a slow query).
    func interruptReads()
    /// Closes every connection. No request may be running.
    func close() throws
    /// How many write transactions are worth running at once (`WriteBatcher`'s writers).
    var concurrentWrites: Int { get }
}

extension StorageEngine {
    /// One writer hands every commit on as it happens (SQLite): nothing to follow.
    func followCommits(after head: Int64) {}
    func unfollowCommits() {}
    /// One writer, which groups every waiting write into its commit (SQLite).
    var concurrentWrites: Int { 1 }
}

/// What a read's statements see of others' commits.
enum ReadConsistency: Sendable {
    /// One snapshot of the last commit for all of them (a read-only transaction).
    case snapshot
    /// Each the last commit when it runs, as Parse Server's reads do (for a get, or a find and its count, whose
    /// answers need not agree). On PostgreSQL it saves a read transaction's BEGIN and COMMIT: a get is one
    /// statement, one wake-up of the database's process instead of two (+30–50 % gets/s, measured). SQLite reads
    /// in one snapshot either way: a thread keeps its snapshot between reads while nothing commits (`KeptSnapshot`).
    case eachStatement
}
