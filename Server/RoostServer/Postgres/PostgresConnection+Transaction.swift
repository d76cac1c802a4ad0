import CLibPQ
import Foundation

/// How a transaction sees others' writes (https://www.postgresql.org/docs/current/transaction-iso.html).
public enum PostgresIsolation: String, Sendable {
    case readCommitted = "READ COMMITTED"
    case repeatableRead = "REPEATABLE READ"
    /// A transaction that would break serial order fails with 40001 (`SQLState.serializationFailure`): run it again.
    case serializable = "SERIALIZABLE"
    /// One snapshot for the whole transaction, which writes nothing (what a read request needs).
    case repeatableReadOnly = "REPEATABLE READ READ ONLY"
}

extension PostgresConnection {
    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws (the error is rethrown).
    ///
    ///     try connection.transaction { db in
    ///         try db.query("update counter set n = n + 1 where id = $1", [id])
    ///     }
    ///
    /// - Throws: `.misuse` inside another transaction; the body's error; the commit's (40001 under `.serializable`).
    /// - Parameter statementTimeout: the time limit of each statement, in milliseconds (0: none); nil: the server's
    ///   default (`statement_timeout`), also on a connection whose statements outside transactions are limited
    ///   (`limitStatementsOutsideTransactions`).
    /// - Parameter awaitingCommit: false only for a `.repeatableReadOnly` transaction on a pooled connection: its
    ///   COMMIT is sent and read at the connection's next use (`commitWithoutWaiting`). Not for a listening
    ///   connection: libpq reads no notification past an answer nobody has taken.
    public func transaction<T>(_ isolation: PostgresIsolation = .readCommitted, statementTimeout: UInt64? = nil,
                               awaitingCommit: Bool = true, _ body: (PostgresConnection) throws -> T) throws -> T {
        precondition(awaitingCommit || isolation == .repeatableReadOnly, "only a read-only transaction's commit goes unread")
        return try transactionOnce(isolation, statementTimeout: statementTimeout, awaitingCommit: awaitingCommit, body)
    }

    /// Runs `body` in a transaction as `transaction(_:_:)` does, and runs it again from the start, up to `attempts`
    /// times in all, while it fails with a serialization failure (40001) or a deadlock (40P01): what PostgreSQL's
    /// manual asks of serializable transactions. `body` must have no effects outside the database. Each attempt
    /// after a failure waits a random while first (`retryDelay`), so transactions that failed each other do not
    /// meet again at once.
    public func transaction<T>(_ isolation: PostgresIsolation, attempts: Int, statementTimeout: UInt64? = nil,
                               _ body: (PostgresConnection) throws -> T) throws -> T {
        try transaction(isolation, attempts: attempts, statementTimeout: statementTimeout, takingTurnsIn: nil, body)
    }

    /// As `transaction(_:attempts:statementTimeout:_:)`, each attempt through `turns`: together with the other
    /// transactions there, and alone once `failuresBeforeRunningAlone` attempts have failed. With waits alone, a
    /// transaction that kept losing to the same few others (one row changed by many clients at once) still lost to
    /// fresh ones at about even odds each time: under load, one of 480 increments of one user's row from 16 clients
    /// used all 20 attempts in 1 run of 5 (`UserTests.sustainedIncrementsOfOneUsersRowAllSucceed`, 12 busy loops on
    /// the two cores).
    ///
    /// The turns are the database's too, so that alone means alone on every node: a transaction running together holds
    /// the advisory lock `turnsLockKey` shared (sent with its BEGIN: no round trip of its own), and one running alone
    /// takes it exclusively before it begins, so its snapshot comes after every other node's writes have ended and no
    /// write can come between it and its commit. Without it, one node's lone increment of a user's row still lost
    /// to the other node's twelve writers up to its 20th attempt: 4 answers of 5,760 were 500 (two nodes, 12 clients
    /// each on one user's row and 12 on one object; `PostgresNodesTests.incrementsOfOneRowFromTwoNodesAllSucceed` is
    /// the smaller check that stays). A write within another (on the same thread) takes
    /// no lock: its outer write holds one for it, and waiting on it would wait for itself.
    func transaction<T>(_ isolation: PostgresIsolation, attempts: Int, statementTimeout: UInt64?, takingTurnsIn turns: WriterGate?,
                        _ body: (PostgresConnection) throws -> T) throws -> T {
        precondition(attempts > 0, "a transaction needs at least one attempt")
        var attempt = 1
        while true {
            do {
                guard let turns else {
                    return try transactionOnce(isolation, statementTimeout: statementTimeout, awaitingCommit: true, body)
                }
                let outermost = !turns.isEnteredByCurrentThread
                if attempt > Self.failuresBeforeRunningAlone {
                    return try turns.alone {
                        try aloneOnEveryNode(outermost) {
                            try transactionOnce(isolation, statementTimeout: statementTimeout, awaitingCommit: true, body)
                        }
                    }
                }
                return try turns.together {
                    try transactionOnce(isolation, statementTimeout: statementTimeout, awaitingCommit: true, sharingTurns: outermost, body)
                }
            } catch let error as PostgresError where error.sqlState?.isRetryable == true && attempt < attempts && isConnected {
                usleep(Self.retryDelay(afterFailures: attempt))  // Outside the gate: the others go on meanwhile.
                attempt += 1
            }
        }
    }

    /// The advisory lock (https://www.postgresql.org/docs/current/explicit-locking.html#ADVISORY-LOCKS) through which
    /// write transactions take turns across nodes; an arbitrary number, Roost's alone in its database.
    static let turnsLockKey: Int64 = 7_626_511_403

    /// Runs `body` (a transaction) holding `turnsLockKey` exclusively, taken at session level before it begins (a
    /// transaction's own lock would come after its snapshot) and given back after it ends, or with the connection.
    private func aloneOnEveryNode<T>(_ isOutermost: Bool, _ body: () throws -> T) throws -> T {
        guard isOutermost else { return try body() }
        // In a transaction of its own only for its time limit: none (it waits for the writes running on every node).
        try transactionOnce(.readCommitted, statementTimeout: 0, awaitingCommit: true) { db in
            _ = try db.execute("SELECT pg_advisory_lock(\(Self.turnsLockKey))")
        }
        defer { if isConnected { _ = try? execute("SELECT pg_advisory_unlock(\(Self.turnsLockKey))") } }
        return try body()
    }

    /// Failed attempts after which a transaction with `takingTurnsIn` runs alone: a few, as most conflicts end within
    /// them (80 increments of one counter from 8 connections took 0.25 s with the waits alone).
    static let failuresBeforeRunningAlone = 3

    /// Microseconds to wait before the attempt after `failures` failed ones: at random up to 250 µs, doubling with
    /// each failure, to at most 25 ms ("full jitter"). Retried at once, the transactions that failed each other
    /// start together again: eight connections incrementing one counter used up 20 attempts within 0.2 s
    /// (`PostgresContentionTests.contendingTransactionsBackOffUntilEveryOneCommits`); a write group of two nodes
    /// racing under heavy load did too, answered 500. At most 0.33 s in all over the engine's 20 attempts.
    static func retryDelay(afterFailures failures: Int) -> UInt32 {
        let ceiling = min(250 << min(max(failures, 1) - 1, 16), 25_000)
        return UInt32.random(in: 0...UInt32(ceiling))
    }

    /// - Parameter sharingTurns: the transaction holds `turnsLockKey` shared (see `transaction(_:attempts:...)`).
    private func transactionOnce<T>(_ isolation: PostgresIsolation, statementTimeout: UInt64?, awaitingCommit: Bool,
                                    sharingTurns: Bool = false, _ body: (PostgresConnection) throws -> T) throws -> T {
        guard isIdle else {
            if !isConnected { throw lostOrFailed(message: String(cString: PQerrorMessage(handle))) }
            throw PostgresError(.misuse, message: "a transaction is already open on this connection", endpoint: endpoint)
        }
        // BEGIN and its time limit go out with the transaction's first statement, in its round trip; a body that runs
        // none (an answer from a cache) costs no round trip at all.
        sendWithNext("BEGIN ISOLATION LEVEL " + isolation.rawValue)
        if let statementTimeout, statementTimeout != statementTimeoutOutsideTransactions {
            sendWithNext("SET LOCAL statement_timeout = \(statementTimeout)")
        } else if statementTimeout == nil, statementTimeoutOutsideTransactions != nil {
            sendWithNext("SET LOCAL statement_timeout TO DEFAULT")  // The server's, not the session's own.
        }
        if sharingTurns { sendWithNext("SELECT pg_advisory_xact_lock_shared(\(Self.turnsLockKey))") }
        let opening = statementsToSend.count
        let value: T
        do {
            value = try body(self)
        } catch {
            statementsToSend.removeAll()
            if isConnected && PQtransactionStatus(handle) != PQTRANS_IDLE { _ = try? execute("ROLLBACK") }
            throw error
        }
        guard PQtransactionStatus(handle) != PQTRANS_IDLE || statementsToSend.count > opening else {
            statementsToSend.removeAll()  // Nothing went out, nor waits to: there is no transaction to end.
            return value
        }
        // A statement error that `body` caught left the transaction aborted: COMMIT would answer "ROLLBACK" as a
        // success, and the caller would take its work for committed.
        if PQtransactionStatus(handle) == PQTRANS_INERROR {
            statementsToSend.removeAll()
            _ = try? execute("ROLLBACK")
            throw PostgresError(.misuse, message: "the transaction failed (a statement error was caught inside it); nothing was committed",
                                endpoint: endpoint)
        }
        do {
            if !awaitingCommit {
                try commitWithoutWaiting()
            } else {
                try executeAfterWaiting("COMMIT")
            }
        } catch {
            statementsToSend.removeAll()
            if isConnected && !isIdle { _ = try? execute("ROLLBACK") }
            throw error
        }
        return value
    }
}

extension PostgresConnection {
    /// Runs `body` with no transaction around its statements: each commits on its own and sees what was committed
    /// when it began (PostgreSQL's autocommit; Parse Server's reads), and none runs longer than `statementTimeout`
    /// milliseconds (0: no limit). A read of one statement then costs one statement: no BEGIN, no COMMIT to send and
    /// wait for.
    /// - Throws: `.misuse` inside a transaction; the body's error.
    public func withoutTransaction<T>(statementTimeout: UInt64, _ body: (PostgresConnection) throws -> T) throws -> T {
        guard isIdle else {
            if !isConnected { throw lostOrFailed(message: String(cString: PQerrorMessage(handle))) }
            throw PostgresError(.misuse, message: "a transaction is open on this connection", endpoint: endpoint)
        }
        try limitStatementsOutsideTransactions(toMilliseconds: statementTimeout)
        return try body(self)
    }

    /// Sets the session's `statement_timeout` (what a statement outside a transaction runs under) unless it is
    /// already `milliseconds`: one round trip, once per connection. Transactions keep their own limit (see
    /// `transaction(_:statementTimeout:awaitingCommit:_:)`); later statements outside one keep this limit too (on a
    /// pooled connection: `PostgresFileStore`'s, each a file's row or one 256 KB chunk).
    func limitStatementsOutsideTransactions(toMilliseconds milliseconds: UInt64) throws {
        guard statementTimeoutOutsideTransactions != milliseconds else { return }
        try execute("SET statement_timeout = \(milliseconds)")
        statementTimeoutOutsideTransactions = milliseconds
    }
}
