import Foundation

/// How a transaction sees others' writes (https://www.postgresql.org/docs/current/transaction-iso.html).
public enum PostgresIsolation: String, Sendable {
    case readCommitted = "READ COMMITTED"
    case repeatableRead = "REPEATABLE READ"
    /// A transaction that would break serial order fails with 40001 (`SQLState.serializationFailure`): run it again.
    case serializable = "SERIALIZABLE"
}

extension PostgresConnection {
    /// Runs `body` in a transaction: committed when it returns, rolled back when it throws (the error is rethrown).
    ///
    ///     try connection.transaction { db in
    ///         try db.query("update counter set n = n + 1 where id = $1", [id])
    ///     }
    ///
    /// - Throws: `.misuse` inside another transaction; the body's error; the commit's (40001 under `.serializable`).
    public func transaction<T>(_ isolation: PostgresIsolation = .readCommitted, _ body: (PostgresConnection) throws -> T) throws -> T {
        guard isIdle else {
            throw PostgresError(.misuse, message: "a transaction is already open on this connection", endpoint: endpoint)
        }
        try execute("BEGIN ISOLATION LEVEL " + isolation.rawValue)
        let value: T
        do {
            value = try body(self)
        } catch {
            if isConnected { _ = try? execute("ROLLBACK") }
            throw error
        }
        do {
            try execute("COMMIT")
        } catch {
            if isConnected && !isIdle { _ = try? execute("ROLLBACK") }
            throw error
        }
        return value
    }
}
