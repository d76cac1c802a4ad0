import Dispatch
import Foundation

/// The single writer connection, with group commit.
///
/// Requests that want to write while another write is in progress queue up. When a group
/// commits, its leader hands the writer straight to the first queued request, which takes every
/// request queued by then and runs them in one transaction, each in its own savepoint (a failing
/// request undoes only its own changes). One commit covers the group, so concurrent writers share
/// its cost. Every caller returns only after the commit that holds its changes, so a reply still
/// means "committed".
///
/// Each waiter sleeps on its own semaphore and is woken exactly once (its group committed, or it
/// leads the next group): a shared condition variable woke every waiter on every commit, and
/// those futex calls and context switches cost more CPU than the commit (measured under `wrk`).
final class WriteQueue: @unchecked Sendable {
    private let connection: SQLiteConnection
    /// Guards `pending`, `isWriting` and `connectionWaiters`.
    private let lock = NSLock()
    private var pending: [Job] = []
    /// Someone owns the writer: a group's leader or a `withConnection` caller.
    private var isWriting = false
    /// Callers of `withConnection` waiting for the writer: they go before the next write group,
    /// which would otherwise keep taking the writer first under a steady load.
    private var connectionWaiters: [DispatchSemaphore] = []

    private final class Job {
        /// Runs the request's body; `isolated` wraps it in a savepoint (needed when others share the transaction).
        /// Returns the body's error, if it threw. Dropped once the group committed: it captures the
        /// caller's non-escaping closure, which must have no other owner when the caller returns.
        var run: ((SQLiteConnection, _ isolated: Bool) -> Error?)?
        let fail: (Error) -> Void
        /// Signalled once: when the job's group has committed, or when the job is to lead the next group.
        let wakeUp = DispatchSemaphore(value: 0)
        /// Set (under the lock, before `wakeUp`) when the writer is handed to this job.
        var leads = false

        init(run: @escaping (SQLiteConnection, Bool) -> Error?, fail: @escaping (Error) -> Void) {
            self.run = run
            self.fail = fail
        }
    }

    /// Told every group's recorded object changes right after the group commits, on the writer's
    /// thread and before the next group starts: calls come in commit order (LiveQuery's ordering).
    private var onCommit: (@Sendable ([ObjectChange]) -> Void)?

    init(connection: SQLiteConnection) {
        self.connection = connection
    }

    /// Records object writes with `recorder` and hands them to `onCommit` once committed.
    func observeCommits(with recorder: ChangeRecorder, onCommit: @escaping @Sendable ([ObjectChange]) -> Void) throws {
        try withConnection { connection in
            connection.writeState.changeRecorder = recorder
            self.onCommit = onCommit
        }
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
            lock.lock()
            pending.append(job)
            if isWriting {
                lock.unlock()
                job.wakeUp.wait()
                guard job.leads else { return try result.get() }  // Another leader committed it.
                lock.lock()
            } else {
                isWriting = true
            }
            let group = pending  // This job is in it: nobody took the queue since it was handed the writer.
            pending = []
            lock.unlock()
            commit(group)
            handOffWriter(finished: group, by: job)
            return try result.get()
        }
    }

    /// Runs SQL outside any request transaction (checkpoints), as soon as the write in progress ends.
    func withConnection<T>(_ body: (SQLiteConnection) throws -> T) throws -> T {
        lock.lock()
        if isWriting {
            let turn = DispatchSemaphore(value: 0)
            connectionWaiters.append(turn)
            lock.unlock()
            turn.wait()  // The writer is handed over with `isWriting` still set.
        } else {
            isWriting = true
            lock.unlock()
        }
        defer { handOffWriter(finished: [], by: nil) }
        return try body(connection)
    }

    /// Passes the writer on (a `withConnection` caller first, then the oldest queued request) or
    /// frees it, then wakes the members of the group that just committed.
    private func handOffWriter(finished group: [Job], by leader: Job?) {
        lock.lock()
        var next: DispatchSemaphore?
        if !connectionWaiters.isEmpty {
            next = connectionWaiters.removeFirst()
        } else if let first = pending.first {
            first.leads = true
            next = first.wakeUp
        } else {
            isWriting = false
        }
        lock.unlock()
        next?.signal()
        for member in group { member.run = nil }
        for member in group where member !== leader { member.wakeUp.signal() }
    }

    private func commit(_ group: [Job]) {
        defer {
            // A failed transaction has dropped its changes already (`inTransaction`).
            if !connection.writeState.objectChanges.isEmpty {
                let changes = connection.writeState.objectChanges
                connection.writeState.objectChanges = []
                onCommit?(changes)
            }
        }
        if group.count == 1 {
            // Alone in its transaction: a failure rolls the transaction back, no savepoint needed.
            let job = group[0]
            do {
                try connection.inTransaction(immediate: true) {
                    if let error = job.run?(connection, false) { throw error }
                }
            } catch {
                job.fail(error)
            }
            return
        }
        do {
            try connection.inTransaction(immediate: true) {
                for job in group { _ = job.run?(connection, true) }
            }
        } catch {
            for job in group { job.fail(error) }  // The commit itself failed: nothing of the group is stored.
        }
    }
}
