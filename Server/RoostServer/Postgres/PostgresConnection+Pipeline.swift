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
        statementsToSend.append((sql, parameters, nil))
    }

    /// `sendWithNext` for a statement that runs often: prepared once on this connection (the first time, in a round
    /// trip of its own), then sent by name, so that the server neither parses nor plans it again. The parameters'
    /// types are the server's to infer (from the columns and functions they meet): a NULL and a number in one place
    /// share the statement.
    func sendPreparedWithNext(_ sql: String, _ parameters: [PostgresValue]) throws {
        let name = try statementName(for: Self.statementKey(sql, []), sql: sql, types: [])
        statementsToSend.append((sql, parameters, name))
    }

    /// Takes back the last statement queued with `sendWithNext` if it is `sql` and has not gone out (nothing ran
    /// since); whether it did.
    func withdrawIfUnsent(_ sql: String) -> Bool {
        guard let last = statementsToSend.last, last.sql == sql, last.parameters.isEmpty, last.preparedName == nil else { return false }
        statementsToSend.removeLast()
        return true
    }

    /// Not by depth: an error answered later can reach a savepoint after another at its depth whose RELEASE never
    /// went out, and ROLLBACK TO names the latest of a name.
    var namesSavepointsByDepth: Bool { false }

    var unsentPosition: UnsentPosition { UnsentPosition(pipeline: pipelinesSent, index: statementsToSend.count) }

    func withdrawUnsent(from position: UnsentPosition) -> Bool {
        guard position.pipeline == pipelinesSent, position.index <= statementsToSend.count else {
            statementsToSend.removeAll()
            return false
        }
        statementsToSend.removeSubrange(position.index...)
        return true
    }

    /// Sends the statements waiting in `statementsToSend`, and waits for them.
    func sendWaitingStatements() throws {
        guard !statementsToSend.isEmpty else { return }
        if let failure = runPipeline({ _ in true }).failure { throw failure }
    }

    /// Runs a statement with no parameters and no rows (COMMIT) after the waiting ones, in one round trip.
    func executeAfterWaiting(_ sql: String) throws {
        readUnreadCommit()
        _ = try pipelined { queue(PQsendQueryParams(handle, sql, 0, nil, nil, nil, nil, 0), &$0) }
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

    /// Sends the waiting statements, then what `send` queues (libpq's `PQsend...` calls, each counted with `queue`;
    /// false at the first refused one), in one pipeline, and reads every answer. Returns the last statement's result.
    /// - Throws: the first statement error (those after it were skipped); libpq's refusal; `.connectionLost`.
    func pipelined(_ send: (inout Int) -> Bool) throws -> PostgresResult {
        try lastResult(of: runPipeline(send))
    }

    /// The last statement's result, or the pipeline's first error.
    func lastResult(of answers: PipelineAnswers) throws -> PostgresResult {
        if let failure = answers.failure { throw failure }
        guard let last = answers.results.last, let result = last else {
            throw lostOrFailed(message: "the pipeline ended without an answer")
        }
        return result
    }

    /// Counts a `PQsend...` call's statement as queued when libpq took it (1); whether it did.
    func queue(_ taken: Int32, _ queued: inout Int) -> Bool {
        guard taken == 1 else { return false }
        queued += 1
        return true
    }

    /// What a pipeline answered: the result of each statement `send` queued (nil where it failed or was skipped),
    /// and the first error.
    struct PipelineAnswers {
        var results: [PostgresResult?] = []
        var failure: Error?
    }

    /// `pipelined`, without throwing: a caller that prepared a statement learns whether the PREPARE itself took.
    func runPipeline(_ send: (inout Int) -> Bool) -> PipelineAnswers {
        var answers = PipelineAnswers()
        guard PQenterPipelineMode(handle) == 1 else {
            answers.failure = lostOrFailed(message: String(cString: PQerrorMessage(handle)))
            return answers
        }
        let waiting = statementsToSend
        statementsToSend.removeAll()
        pipelinesSent += 1
        var queuedWaiting = 0
        for statement in waiting {
            let queued = withParameters(statement.parameters) { count, values, lengths, formats in
                if let name = statement.preparedName {
                    return PQsendQueryPrepared(handle, name, count, values, lengths, formats, 0) == 1
                }
                return PQsendQueryParams(handle, statement.sql, count, statement.parameters.map(\.parameterType), values, lengths, formats, 0) == 1
            }
            guard queued else { break }
            queuedWaiting += 1
        }
        var queuedOwn = 0
        if queuedWaiting < waiting.count || !send(&queuedOwn) {
            answers.failure = lostOrFailed(message: String(cString: PQerrorMessage(handle)))
        }
        // A refused statement (more parameters than the protocol carries) leaves those before it queued: they are
        // ended and read like any others, or the connection would wait forever for answers never asked for.
        guard PQpipelineSync(handle) == 1 else {
            // The connection cannot end its pipeline: broken. It stays busy, and the pool drops it.
            answers.failure = answers.failure ?? lostOrFailed(message: String(cString: PQerrorMessage(handle)))
            return answers
        }
        // Each statement's answer ends with a null result; then comes the pipeline's end (PGRES_PIPELINE_SYNC).
        for index in 0..<(queuedWaiting + queuedOwn) {
            var last: PostgresResult?
            while let result = PQgetResult(handle) {
                if PQresultStatus(result) == PGRES_PIPELINE_ABORTED {
                    PQclear(result)
                    continue
                }
                do { last = try check(result) } catch { answers.failure = answers.failure ?? error }
            }
            if index >= queuedWaiting { answers.results.append(last) }
        }
        while let result = PQgetResult(handle) {
            let end = PQresultStatus(result) == PGRES_PIPELINE_SYNC
            if !end, PQresultStatus(result) == PGRES_FATAL_ERROR, answers.failure == nil {
                answers.failure = lostOrFailed(message: String(cString: PQresultErrorMessage(result)))
            }
            PQclear(result)
            if end { break }
        }
        if PQexitPipelineMode(handle) != 1 {
            answers.failure = answers.failure ?? lostOrFailed(message: String(cString: PQerrorMessage(handle)))
        }
        return answers
    }
}
