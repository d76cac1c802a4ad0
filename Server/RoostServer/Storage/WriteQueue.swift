import Foundation

/// The single writer connection, with group commit.
///
/// Requests that want to write while another write is in progress queue up; whoever finds the
/// writer free takes every queued request and runs them in one transaction, each in its own
/// savepoint (a failing request undoes only its own changes). One commit then covers the group,
/// so concurrent writers share its cost. Every caller returns only after the commit that holds
/// its changes, so a reply still means "committed".
final class WriteQueue: @unchecked Sendable {
    private let connection: SQLiteConnection
    private let condition = NSCondition()
    private var pending: [Job] = []
    private var isWriting = false
    /// Callers of `withConnection` waiting for the writer: they go before new write groups, which
    /// would otherwise keep taking the writer first under a steady load.
    private var connectionWaiters = 0

    private final class Job {
        /// Runs the request's body; `isolated` wraps it in a savepoint (needed when others share the transaction).
        /// Returns the body's error, if it threw.
        let run: (SQLiteConnection, _ isolated: Bool) -> Error?
        let fail: (Error) -> Void
        var isDone = false

        init(run: @escaping (SQLiteConnection, Bool) -> Error?, fail: @escaping (Error) -> Void) {
            self.run = run
            self.fail = fail
        }
    }

    init(connection: SQLiteConnection) {
        self.connection = connection
    }

    /// Runs `body` on the writer inside a savepoint of a group transaction; returns once committed.
    func write<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        var result: Result<T, Error> = .failure(CancellationError())
        return try withoutActuallyEscaping(body) { body in
            // The caller waits below until the job ran, so the closure never outlives this call.
            let job = Job(
                run: { connection, isolated in
                    result = Result { isolated ? try connection.inSavepoint { try body(connection) } : try body(connection) }
                    if case .failure(let error) = result { return error }
                    return nil
                },
                fail: { error in result = .failure(error) })
            condition.lock()
            pending.append(job)
            while !job.isDone {
                if isWriting || connectionWaiters > 0 {
                    condition.wait()
                    continue
                }
                isWriting = true
                let group = pending
                pending = []
                condition.unlock()
                commit(group)
                condition.lock()
                for member in group { member.isDone = true }
                isWriting = false
                condition.broadcast()
            }
            condition.unlock()
            return try result.get()
        }
    }

    /// Runs SQL outside any request transaction (checkpoints), as soon as the write in progress ends.
    func withConnection<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        condition.lock()
        connectionWaiters += 1
        while isWriting { condition.wait() }
        connectionWaiters -= 1
        isWriting = true
        condition.unlock()
        defer {
            condition.lock()
            isWriting = false
            condition.broadcast()
            condition.unlock()
        }
        return try body(connection)
    }

    private func commit(_ group: [Job]) {
        if group.count == 1 {
            // Alone in its transaction: a failure rolls the transaction back, no savepoint needed.
            let job = group[0]
            do {
                try connection.inTransaction(immediate: true) {
                    if let error = job.run(connection, false) { throw error }
                }
            } catch {
                job.fail(error)
            }
            return
        }
        do {
            try connection.inTransaction(immediate: true) {
                for job in group { _ = job.run(connection, true) }
            }
        } catch {
            for job in group { job.fail(error) }  // The commit itself failed: nothing of the group is stored.
        }
    }
}
