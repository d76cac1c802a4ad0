import CLibPQ
import RoostCore

/// The stores' side of a PostgreSQL connection (see `SQLConnection`): the same calls as on SQLite.
extension PostgresConnection: SQLConnection {
    var dialect: SQLDialect { .postgres }

    func run(_ sql: String, _ arguments: [SQLValue], cacheable: Bool) throws {
        try execute(sql, arguments, cacheable: cacheable)
    }

    /// Queued for the next statement's round trip. Refused in an aborted transaction (a statement error something
    /// caught): sent at once, RELEASE would have failed there and then; queued, the failure would land on the next
    /// request of a group.
    func runSoon(_ sql: String) throws {
        try refuseInAbortedTransaction()
        sendWithNext(sql)
    }

    private func refuseInAbortedTransaction() throws {
        if PQtransactionStatus(handle) == PQTRANS_INERROR {
            throw PostgresError(.misuse, message: "the transaction failed (a statement error was caught inside it)", endpoint: endpoint)
        }
    }

    /// Prepared, and queued for the next statement's round trip inside `answeringLater` (refused, as `runSoon`, in
    /// an aborted transaction); run now otherwise.
    func runAnsweredLater(_ sql: String, _ arguments: [SQLValue]) throws {
        guard writeState.answersLater else { return try execute(sql, arguments) }
        try refuseInAbortedTransaction()
        try Self.answeringClientErrors {
            try sendPreparedWithNext(SQLPlaceholders.postgres(sql), try arguments.map(PostgresValue.init))
        }
    }

    func awaitAnswers() throws {
        try Self.answeringClientErrors { try sendWaitingStatements() }
    }

    /// What PostgreSQL refuses in a client's values or patterns, answered as Parse answers a bad value (never a 500), at
    /// the statement: a grouped write answers each request in its own savepoint (`WriteBatcher.write`).
    static func answeringClientErrors<T>(_ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch let error as PostgresError where error.sqlState == .untranslatableCharacter {
            throw ParseError(.invalidJSON, "A string holding the NUL character (U+0000) cannot be stored on PostgreSQL.")
        } catch let error as PostgresError where error.sqlState == .invalidRegularExpression {
            // A pattern PCRE2 accepts (checked before) that PostgreSQL's regex engine refuses.
            throw ParseError(.invalidQuery, "bad regex: \(error.message)")
        }
    }
}
