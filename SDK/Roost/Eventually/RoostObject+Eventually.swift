import Foundation
import RoostCore

/// `saveEventually` and `deleteEventually`: the edit is committed to the client's durable queue
/// before the call returns, and delivered exactly once, in order, when the server is reachable.
/// What is retried, what is refused for good and what pauses the queue: see `EventuallyQueue` and
/// the README ("Offline: saveEventually…").
///
/// Do not mix `saveEventually` and `save` on the same new object: the queue creates it.
extension RoostObject {
    /// Queues the unsaved edits (and the creation of new objects this one points to). Returns once
    /// they are on disk; a crash right after loses nothing.
    public func saveEventually() throws {
        try client.eventually.enqueueSave(self, completion: nil)
    }

    /// `saveEventually()` from async code.
    public func saveEventually() async throws {
        try client.eventually.enqueueSave(self, completion: nil)
    }

    /// Queues the edits and pins this object under `pinName` in the same transaction: the pinned
    /// list and the queue change together (another process holding a lock fails both or neither).
    public func saveEventually(pinName: String) throws {
        try client.eventually.enqueueSave(self, pinName: pinName, completion: nil)
    }

    public func saveEventually(pinName: String) async throws {
        try client.eventually.enqueueSave(self, pinName: pinName, completion: nil)
    }

    /// Queues the edits; `completion` runs on a background thread once the server accepted them or
    /// refused them for good (if this process still runs then; the command is delivered either way).
    public func saveEventually(_ completion: @escaping @Sendable (Result<Void, Error>) -> Void) throws {
        try client.eventually.enqueueSave(self, completion: completion)
    }

    /// Queues the deletion, delivered after every earlier queued command.
    public func deleteEventually() throws {
        try client.eventually.enqueueDelete(self, completion: nil)
    }

    public func deleteEventually() async throws {
        try client.eventually.enqueueDelete(self, completion: nil)
    }

    public func deleteEventually(_ completion: @escaping @Sendable (Result<Void, Error>) -> Void) throws {
        try client.eventually.enqueueDelete(self, completion: completion)
    }

    /// Takes the unsaved edits for the queue: they become part of this client's view of the object
    /// at once, and the body to send later is returned (`nil` when there is nothing to send).
    func handOverEdits() -> JSON? {
        lock.withLock {
            let operations = state.pending
            guard !operations.isEmpty || (state.objectId == nil && !state.isCreationQueued) else { return nil }
            if state.objectId == nil { state.isCreationQueued = true }
            state.pending = [:]
            for (key, operation) in operations {
                state.serverData[key] = try? operation.applied(to: state.serverData[key])
            }
            for key in Self.transientKeys { state.serverData.removeValue(forKey: key) }
            return .object(operations.mapValues(OperationMerging.json))
        }
    }

    /// The queue created this object: take its objectId and dates.
    func applyEventualAnswer(_ answer: JSON) {
        lock.withLock {
            if let id = answer["objectId"]?.stringValue { state.objectId = id }
            if let created = answer["createdAt"] {
                state.createdAt = Date(roostJSON: created)
                state.updatedAt = state.createdAt
            }
            if let updated = answer["updatedAt"] { state.updatedAt = Date(roostJSON: updated) }
        }
    }
}

extension RoostClient {
    /// Commands queued by `saveEventually`/`deleteEventually` not yet delivered.
    public var pendingCount: Int { eventually.store.pendingCount }

    /// Returns once every queued command was delivered (or refused for good: see `failedCommands()`).
    /// - Throws: `RoostError.misconfigured` when the server refuses this client's configuration (wrong
    ///   application id, no Parse API at the URL: the commands are kept, and delivered once the client
    ///   is configured right); a 209 `RoostError.server` when the commands left wait for their user to
    ///   log in again (the session was revoked); `CancellationError` when the task is cancelled.
    public func waitForPendingWrites() async throws {
        try await eventually.waitUntilEmpty()
    }

    /// `waitForPendingWrites()` for code that is not async.
    public func waitForPendingWritesBlocking() throws {
        try runBlocking { try await self.waitForPendingWrites() }
    }

    /// `waitForPendingWrites(timeout:)` for code that is not async.
    @discardableResult
    public func waitForPendingWritesBlocking(timeout seconds: TimeInterval) throws -> Bool {
        try runBlocking { try await self.waitForPendingWrites(timeout: seconds) }
    }

    /// Queued commands the server refused with a Parse error, oldest first.
    public func failedCommands() throws -> [FailedCommand] { try eventually.store.failed() }

    public func clearFailedCommands() throws { try eventually.store.clearFailed() }

    /// Who queues commands now: the current user's objectId, or an automatic user's localId.
    var currentUserKey: String? { currentUser.map { $0.objectId ?? $0.localId } }
}
