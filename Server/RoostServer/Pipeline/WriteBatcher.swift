import Dispatch
import Foundation
import RoostCore

/// Creates, updates and deletes of the app's own objects (`/classes/<Class>`), written by one thread
/// in shared transactions.
///
/// An HTTP thread parses and authenticates the request, parks its connection (`LaterReply`) and submits
/// it here. This thread takes every request queued since its last commit, runs them (in one savepoint,
/// or, once one fails, each in its own: a failing request undoes only itself, as in `/batch`), commits
/// once and hands the outcomes back (the HTTP threads encode and write the replies). So an HTTP thread
/// does not sleep while another request holds the writer — it goes on serving its other connections,
/// whose writes join the next group — and under load one commit (WAL frames, file locks) covers many
/// requests. A reply still means "committed".
///
/// The group is one `Storage.write`: it joins `WriteQueue`'s group commit with the writes that do not
/// come through here (users, sessions, batches, `X-Parse-Request-Id` requests), so while one of
/// those leads a commit, the group's requests may run on that leader's thread.
///
/// Measured on the project's 2-core VM (wrk, 16 connections, creates; A/B alternating binaries):
/// 12–15.7k → 18–19.7k req/s, p99 4.3–6.9 → 2.7–5.1 ms, against HTTP threads that waited in the
/// write queue themselves.
///
/// A class with a `before` trigger webhook: the request finds it inside the group, is answered
/// `NeedsOwnWrite` (its changes undone, as a failing request's are) and starts over on its own HTTP
/// thread, where the webhook is called outside any transaction, as before this batcher existed.
final class WriteBatcher: @unchecked Sendable {
    typealias Dispatcher = (APIRequest, RequestContext) throws -> APIResponse

    /// Thrown inside a group by a `before` trigger webhook, and answered: the caller runs the request
    /// again on its own, so the webhook does not hold the writer while it answers.
    struct NeedsOwnWrite: Error {}

    private let storage: Storage
    private let dispatch: Dispatcher
    private let condition = NSCondition()
    private var queue: [Job] = []
    private var isStopping = false
    private let stopped = DispatchSemaphore(value: 0)
    private let writers: Int
    /// Groups run side by side, and one alone after it lost every attempt to another (PostgreSQL).
    private let gate = WriterGate()
    /// Bounds one transaction (and the wait of its last request).
    static let maximumGroup = 64

    private final class Job: @unchecked Sendable {  // Touched by one thread at a time.
        let request: APIRequest
        let context: RequestContext
        let answer: (Result<APIResponse, Error>) -> Void
        var outcome: Result<APIResponse, Error> = .failure(CancellationError())

        init(_ request: APIRequest, _ context: RequestContext, answer: @escaping (Result<APIResponse, Error>) -> Void) {
            self.request = request
            self.context = context
            self.answer = answer
        }
    }

    /// - Parameter writers: how many groups run at once (`Storage.concurrentWrites`: one on SQLite, several on
    ///   PostgreSQL, whose transactions run side by side).
    init(storage: Storage, writers: Int = 1, dispatch: @escaping Dispatcher) {
        self.storage = storage
        self.dispatch = dispatch
        self.writers = writers
        for _ in 0..<writers {
            let thread = Thread { [self] in
                nameCurrentThread("roost-writer")
                run()
            }
            thread.start()
        }
    }

    /// Whether `request` is one this batcher runs: a create, update or delete of an ordinary object.
    /// System classes (`_User`, `_Installation`...) keep their own routes: some hash passwords.
    static func accepts(_ request: APIRequest) -> Bool {
        let segments = request.segments
        guard segments.count >= 2, segments[0] == "classes", !segments[1].hasPrefix("_") else { return false }
        switch (request.method, segments.count) {
        case ("POST", 2), ("PUT", 3), ("DELETE", 3): return true
        default: return false
        }
    }

    /// Queues `request`; `answer` is called once with its outcome after the commit (on the writer thread).
    func submit(_ request: APIRequest, _ context: RequestContext, answer: @escaping (Result<APIResponse, Error>) -> Void) {
        condition.lock()
        guard !isStopping else {  // The HTTP server stops first, so nothing comes this late; refuse it all the same.
            condition.unlock()
            answer(.failure(ParseError(.internalServerError, "The server is shutting down.")))
            return
        }
        queue.append(Job(request, context, answer: answer))
        if queue.count == 1 { condition.signal() }  // The writer may be waiting for work.
        condition.unlock()
    }

    /// Answers every queued request, then ends the thread.
    func stop() {
        condition.lock()
        let wasStopping = isStopping
        isStopping = true
        condition.broadcast()
        condition.unlock()
        if !wasStopping { for _ in 0..<writers { stopped.wait() } }
    }

    private func nextGroup() -> ArraySlice<Job>? {
        condition.lock()
        defer { condition.unlock() }
        while queue.isEmpty {
            if isStopping { return nil }
            condition.wait()
        }
        let group = queue.prefix(WriteBatcher.maximumGroup)
        queue.removeFirst(group.count)
        return group
    }

    private func run() {
        // Whether this writer's last group held a failing request: the next then gives each request its savepoint
        // from the start (`write`), so a steady stream of failing requests never makes groups run twice.
        var lastGroupFailed = false
        while let group = nextGroup() {
            do {
                do {
                    try gate.together { try write(group, oneSavepoint: !lastGroupFailed) }
                } catch let failure as PostgresError where failure.isRetryable {
                    // Two groups changing one row undid each other until the group used all its attempts (measured:
                    // 1 in 800 increments of one counter from 16 clients, answered 500): run it again alone.
                    try gate.alone { try write(group, oneSavepoint: !lastGroupFailed) }
                }
            } catch {
                for job in group { job.outcome = .failure(error) }  // The commit failed: none of the group is stored.
            }
            lastGroupFailed = group.contains { if case .failure = $0.outcome { true } else { false } }
            for job in group { job.answer(job.outcome) }
        }
        stopped.signal()
    }

    /// Runs the group in one savepoint while every request succeeds (the usual case), and again with a savepoint per
    /// request once one fails (which undoes its own changes only). A savepoint per request cost PostgreSQL two
    /// statements and a subtransaction each; measured with wrk creating (16 connections, 8 alternating pairs of 5 s
    /// runs, each on a fresh database): median 5.4k → 5.8k creates/s (faster in 6 pairs of 8), PostgreSQL's CPU per
    /// create 150 → 139 µs; on SQLite no slower. A group holding a failing request runs twice (a `before` trigger's
    /// request fails in a group too: `NeedsOwnWrite`); `oneSavepoint` is false after such a group (`run`). The
    /// one-savepoint run answers its creates' INSERTs together, at its end (`answeringLater`; measured in the README,
    /// PostgreSQL, "A group's creates answered together"); the run with a savepoint each awaits every statement.
    private func write(_ group: ArraySlice<Job>, oneSavepoint: Bool) throws {
        // The jobs' `after` webhooks go out once the group has committed (`SQLConnection.afterCommit`).
        try storage.write { db in
            if oneSavepoint, group.count > 1,
                (try? db.inSavepointToRunAgain({ try db.answeringLater { try run(group, in: db, isolated: false) } })) != nil { return }
            // A serialization failure or deadlock: the whole transaction runs again (`PostgresEngine.write`).
            if db.writeState.retryableFailure != nil { return }
            try run(group, in: db, isolated: true)
        }
    }

    /// Runs each request, each in a savepoint of its own when `isolated`; when not, stops at the first failure (thrown).
    private func run(_ group: ArraySlice<Job>, in db: any SQLConnection, isolated: Bool) throws {
        for job in group {
            var shared = job.context.joining(db)
            shared.inGroupedWrite = true
            job.outcome = Result { isolated ? try db.inSavepoint { try dispatch(job.request, shared) } : try dispatch(job.request, shared) }
            if !isolated, case .failure(let error) = job.outcome { throw error }
        }
    }
}
