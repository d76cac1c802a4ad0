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

    private final class Job {
        let run: (SQLiteConnection) -> Void
        let fail: (Error) -> Void
        var isDone = false

        init(run: @escaping (SQLiteConnection) -> Void, fail: @escaping (Error) -> Void) {
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
                run: { connection in result = Result { try connection.inSavepoint { try body(connection) } } },
                fail: { error in result = .failure(error) })
            condition.lock()
            pending.append(job)
            while !job.isDone {
                if isWriting {
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

    /// Runs SQL outside any request (checkpoints at shutdown), after queued writes.
    func withConnection<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        condition.lock()
        while isWriting { condition.wait() }
        defer { condition.unlock() }
        return try body(connection)
    }

    private func commit(_ group: [Job]) {
        do {
            try connection.inTransaction(immediate: true) {
                for job in group { job.run(connection) }
            }
        } catch {
            for job in group { job.fail(error) }  // The commit itself failed: nothing of the group is stored.
        }
    }
}
