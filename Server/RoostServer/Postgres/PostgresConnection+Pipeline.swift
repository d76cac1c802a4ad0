import CLibPQ
import Foundation

/// Fewer round trips: statements whose answer nobody waits for (BEGIN, SAVEPOINT, RELEASE, a read's COMMIT, the
/// LiveQuery log's rows) go out together with the next statement that is waited for, in libpq's pipeline mode
/// (https://www.postgresql.org/docs/current/libpq-pipeline-mode.html). A read is then one round trip (BEGIN, its
/// `SET LOCAL`, the SELECT; its COMMIT is sent and read at the next use) where it was three, and a grouped create
/// one (RELEASE of the last, SAVEPOINT, INSERT) where it was three.
///
/// Errors keep their place: a statement sent ahead that fails makes the pipeline stop there (PostgreSQL skips the
/// rest to the pipeline's end, and an open transaction is left aborted), and its error is the one thrown, by the
/// statement it went out with.
extension PostgresConnection {
    /// Sends `sql` ahead of the next statement, in that statement's round trip, instead of waiting for it now.
    func sendWithNext(_ sql: String, _ parameters: [PostgresValue] = []) {
        statementsToSend.append((sql, parameters))
    }

    /// Takes back the last statement queued with `sendWithNext` if it is `sql` and has not gone out (nothing ran
    /// since); whether it did.
    func withdrawIfUnsent(_ sql: String) -> Bool {
        guard let last = statementsToSend.last, last.sql == sql, last.parameters.isEmpty else { return false }
        statementsToSend.removeLast()
        return true
    }

    /// Sends the statements waiting in `statementsToSend`, and waits for them.
    func sendWaitingStatements() throws {
        guard !statementsToSend.isEmpty else { return }
        _ = try runPipeline(statements: 0) { true }
    }

    /// Runs a statement with no parameters and no rows (COMMIT) after the waiting ones, in one round trip.
    func executeAfterWaiting(_ sql: String) throws {
        readUnreadCommit()
        _ = try pipelined(statements: 1) { PQsendQueryParams(handle, sql, 0, nil, nil, nil, nil, 0) == 1 }
    }

    /// Sends COMMIT and returns without its answer, which the connection's next use reads (`readUnreadCommit`). Only
    /// for a read-only transaction: its commit makes nothing durable, and no answer to it could change the reply.
    func commitWithoutWaiting() throws {
        guard statementsToSend.isEmpty else { return try executeAfterWaiting("COMMIT") }
        guard PQsendQuery(handle, "COMMIT") == 1 else { throw lostOrFailed(message: String(cString: PQerrorMessage(handle))) }
        commitUnread = true
    }

    /// Reads the answer to `commitWithoutWaiting`'s COMMIT (by now it has usually arrived). A failure shows at the
    /// next statement: the connection is gone.
    func readUnreadCommit() {
        guard commitUnread else { return }
        commitUnread = false
        while let result = PQgetResult(handle) { PQclear(result) }
    }

    /// Sends the waiting statements, then the `statements` ones `send` queues (libpq's `PQsend...` calls; false when
    /// one was refused), in one pipeline, and reads every answer. Returns the last statement's result.
    /// - Throws: the first statement error (those after it were skipped); `.connectionLost`.
    func pipelined(statements: Int, _ send: () -> Bool) throws -> PostgresResult {
        precondition(statements > 0, "a pipeline's result is its last statement's")
        guard let result = try runPipeline(statements: statements, send) else {
            throw lostOrFailed(message: "the pipeline ended without an answer")
        }
        return result
    }

    /// `pipelined`, also for no statements of `send`'s (then nil).
    private func runPipeline(statements: Int, _ send: () -> Bool) throws -> PostgresResult? {
        let waiting = statementsToSend
        statementsToSend.removeAll()
        guard PQenterPipelineMode(handle) == 1 else { throw lostOrFailed(message: String(cString: PQerrorMessage(handle))) }
        var sent = true
        for statement in waiting where sent {
            sent = withParameters(statement.parameters) { count, values, lengths, formats in
                PQsendQueryParams(handle, statement.sql, count, statement.parameters.map(\.parameterType), values, lengths, formats, 0) == 1
            }
        }
        sent = sent && send() && PQpipelineSync(handle) == 1
        let refusal = sent ? nil : lostOrFailed(message: String(cString: PQerrorMessage(handle)))
        var failure: Error?
        var last: PostgresResult?
        // Each statement's answer ends with a null result; then comes the pipeline's end (PGRES_PIPELINE_SYNC).
        let answers = sent ? waiting.count + statements : 0
        for _ in 0..<answers {
            last = nil
            while let result = PQgetResult(handle) {
                if PQresultStatus(result) == PGRES_PIPELINE_ABORTED {
                    PQclear(result)
                    continue
                }
                do { last = try check(result) } catch { failure = failure ?? error }
            }
        }
        while let result = PQgetResult(handle) {
            let end = PQresultStatus(result) == PGRES_PIPELINE_SYNC
            PQclear(result)
            if end { break }
        }
        if PQexitPipelineMode(handle) != 1 {
            failure = failure ?? lostOrFailed(message: String(cString: PQerrorMessage(handle)))
        }
        if let failure = refusal ?? failure { throw failure }
        return statements > 0 ? last : nil
    }
}
